package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/admitd/admitd/internal/server"
	"github.com/admitd/admitd/internal/startup"
)

func newServeCommand() *cobra.Command {
	o := server.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API server with its admission chain",
		Example: `  # embedded storage in ./admitd-data, admin kubeconfig written there
  admitd serve
  export KUBECONFIG=$PWD/admitd-data/admin.kubeconfig
  kubectl get namespaces

  # everyone may do everything (no RBAC), as kube-apiserver's own default
  admitd serve --authorization-mode=AlwaysAllow

  # three simulated nodes that run the pods scheduled onto them
  admitd serve --simulated-nodes=3`,
		Args: cobra.NoArgs,
		// the collector stays paused until the server is ready (RunE)
		PersistentPreRun: func(*cobra.Command, []string) {},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkAuthorizationFlags(cmd.Flags()); err != nil {
				return err
			}
			if err := checkServingFlags(o.Serving); err != nil {
				return err
			}
			if err := o.CSRSigning.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			s, err := startUnlessSignalled(ctx, o)
			startup.Resume()
			if err != nil {
				return err
			}
			if s.KubeconfigPath != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "admitd serving on %s; export KUBECONFIG=%s\n", s.URL, s.KubeconfigPath)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "admitd serving on %s\n", s.URL)
			}
			select {
			case <-ctx.Done():
				stop() // a second signal ends the process at once
				return s.Shutdown()
			case <-s.Done():
			}
			return s.Close()
		},
	}
	f := cmd.Flags()
	addServiceAccountFlags(f, &o.ServiceAccounts)
	addServiceIPFlags(f, &o)
	addEtcdFlags(f, &o)
	addLeaderElectionFlags(f, &o.LeaderElection)
	addControllersFlag(f, &o.Controllers)
	f.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "IP address to serve on")
	f.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "HTTPS port (0 picks a free port)")
	f.StringVar(&o.DataDir, "data-dir", o.DataDir, "directory for the embedded store and generated certificates")
	f.StringVar(&o.Storage, "storage", o.Storage, "storage backend: bolt (embedded, in --data-dir) or memory")
	f.StringVar(&o.TLSCertFile, "tls-cert-file", "", "serving certificate (PEM); default: generated in --data-dir")
	f.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", "", "serving key (PEM)")
	f.StringVar(&o.ClientCAFile, "client-ca-file", "", "CA bundle for x509 client-certificate authentication")
	f.StringVar(&o.TokenAuthFile, "token-auth-file", "", "static bearer tokens (kube-apiserver CSV: token,user,uid,\"group1,group2\")")
	f.BoolVar(&o.AnonymousAuth, "anonymous-auth", false, "serve requests without credentials as system:anonymous")
	f.StringVar(&o.KubeconfigOut, "kubeconfig-out", "", "where to write the admin kubeconfig (default <data-dir>/admin.kubeconfig; - to skip)")
	f.StringSliceVar(&o.EnableAdmissionPlugins, "enable-admission-plugins", nil, "admission plugins to enable in addition to the default ones (order does not matter)")
	f.StringSliceVar(&o.DisableAdmissionPlugins, "disable-admission-plugins", nil, "admission plugins to disable")
	f.StringSliceVar(&o.AdmissionControl, "admission-control", nil, "deprecated: exactly the admission plugins to run (mutually exclusive with --enable-admission-plugins and --disable-admission-plugins)")
	f.BoolVar(&o.AllowPrivileged, "allow-privileged", false, "if true, allow privileged containers (kube-apiserver's default: false)")
	f.StringVar(&o.FeatureGates, "feature-gates", "", "feature gates as kube-apiserver 1.37 knows them: A=true,B=false,...")
	addRuntimeConfigFlag(f, &o.RuntimeConfig)
	f.StringVar(&o.AdmissionControlConfigFile, "admission-control-config-file", "", "AdmissionConfiguration (apiserver.config.k8s.io/v1) with per-plugin configuration")
	o.DefaultNotReadyTolerationSeconds = f.Int64("default-not-ready-toleration-seconds", 300, "Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.")
	o.DefaultUnreachableTolerationSeconds = f.Int64("default-unreachable-toleration-seconds", 300, "Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.")
	f.DurationVar(&o.CompactionInterval, "storage-compaction-interval", o.CompactionInterval, "how often to compact the storage history, keeping at least one interval of it (as kube-apiserver's --etcd-compaction-interval); 0 disables")
	f.BoolVar(&o.Quota.Controller, "quota-controller", true, "run the resource quota controller (kube-controller-manager's): keep ResourceQuota status.hard and status.used; --quota-controller=false leaves quota status to whoever writes it, as a kube-apiserver alone")
	f.DurationVar(&o.Quota.Resync, "resource-quota-sync-period", server.DefaultQuotaResync, "how often the quota controller recalculates every quota's usage")
	f.StringVar(&o.ServiceMap, "service-map", "", "JSON file mapping <svc>.<ns>.svc to the host:port to dial for webhooks behind that Service")
	f.StringVar(&o.AuditLogPath, "audit-log-path", "", "write audit events (audit.k8s.io/v1 JSON lines) to this file")
	f.StringVar(&o.AuditPolicyFile, "audit-policy-file", "", "audit policy (audit.k8s.io/v1 Policy)")
	f.StringSliceVar(&o.AuthorizationModes, "authorization-mode", o.AuthorizationModes,
		"ordered list of authorizers: AlwaysAllow, AlwaysDeny, Node, RBAC, Webhook (ABAC: not implemented yet); system:masters is always allowed")
	addAuthorizationWebhookFlags(f, &o.AuthorizationWebhook)
	addAuthorizationConfigFlag(f, &o.AuthorizationConfigFile)
	addTraceFlags(f, &o)
	addServingFlags(f, &o.Serving)
	addAggregationFlags(f, &o.Aggregation)
	addSimulatedNodeFlags(f, &o.SimulatedNodes)
	addPodGCFlags(f, &o.PodGC)
	addNodeLifecycleFlags(f, &o.NodeLifecycle)
	addLegacyTokenCleanerFlags(f, &o.LegacyTokenCleaner)
	addCSRSigningFlags(f, &o.CSRSigning)
	addBackgroundAuditFlags(f, &o.BackgroundAudit)
	return cmd
}

// startUnlessSignalled starts the server, or returns when ctx ends first
// (a SIGTERM or an interrupt while it waits for etcd, say): the process
// then exits instead of serving. The server's life is not ctx's: once it
// serves, a signal shuts it down gracefully.
func startUnlessSignalled(ctx context.Context, o server.Options) (*server.Server, error) {
	type started struct {
		s   *server.Server
		err error
	}
	done := make(chan started, 1)
	go func() {
		s, err := server.Start(context.Background(), o)
		done <- started{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-ctx.Done():
		return nil, errors.New("interrupted while starting, before serving")
	}
}
