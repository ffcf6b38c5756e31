package evaluate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/server"
)

// ServerConfig is the configuration of the in-process server, in the
// terms of `admitd serve`'s flags of the same names.
type ServerConfig struct {
	EnableAdmissionPlugins     []string
	DisableAdmissionPlugins    []string
	AdmissionControlConfigFile string
	FeatureGates               string
	AllowPrivileged            bool
	// AuthorizationModes default to AlwaysAllow: eval is about admission,
	// and any user may send the request. Node,RBAC (serve's default)
	// evaluates authorization too, against the RBAC objects given.
	AuthorizationModes []string
	// ServiceMap is serve's --service-map: webhooks behind the Services
	// it names are dialed at the mapped addresses.
	ServiceMap string
	// CallUnreachableWebhooks lets webhooks behind a Service that neither
	// the service map nor a recorded response covers be called anyway:
	// the calls fail, as on a cluster where that Service does not answer,
	// and each webhook's failurePolicy decides. Without it eval refuses
	// such a configuration before sending anything.
	CallUnreachableWebhooks bool
	// QuotaController runs the resource quota controller, as admitd serve
	// does by default (--quota-controller).
	QuotaController bool
	// Controllers is admitd serve's --controllers: which of
	// kube-controller-manager's controllers the server runs. Nil means
	// DefaultControllers.
	Controllers []string
	// ExpandWorkloads runs the workload controllers (WorkloadControllers,
	// unless Controllers says otherwise) and reports the creates they send
	// because of the request: a Deployment's ReplicaSet, its Pods.
	ExpandWorkloads bool
	// Logger receives the server's logs (default: discarded).
	Logger *slog.Logger
	// copiedObjects: a Session's server holds objects copied from
	// elsewhere (see server.Options.CopiedObjects).
	copiedObjects bool
}

// DefaultControllers are the controllers the in-process server runs: all
// but the root CA publisher (its kube-root-ca.crt holds this in-process
// server's CA, different on every run, plays no part in an admission
// decision, and is created through admission: a webhook matching
// ConfigMap creates would be called with it) and the workload controllers
// (a ReplicaSet or Deployment among the objects given would have its
// pods created through admission while the request is evaluated, a
// Service its EndpointSlices and Endpoints, an Endpoints its mirrored
// EndpointSlices), nor those that would rewrite
// or remove the objects given while they are evaluated (finished Jobs,
// budgets' status, pods a GC would collect, certificate requests signed,
// approved or cleaned up, nodes' taints and conditions, pods on tainted
// nodes deleted, claims and volumes bound, released or marked Lost, the
// bindings written through admission, workloads rescaled to their
// autoscalers' bounds and the autoscalers' status, pods' ResourceClaims
// made from their templates through admission, claims' reservations
// dropped).
var DefaultControllers = []string{"*", "-" + controllers.RootCAControllerName, "-" + controllers.ReplicaSetControllerName,
	"-" + controllers.ReplicationControllerControllerName, "-" + controllers.DeploymentControllerName,
	"-daemonset-controller", "-job-controller",
	"-" + controllers.StatefulSetControllerName,
	"-" + controllers.CronJobControllerName,
	"-" + controllers.EndpointSliceControllerName, "-" + controllers.EndpointsControllerName,
	"-" + controllers.EndpointSliceMirroringControllerName,
	"-ttl-after-finished-controller", "-disruption-controller", "-pod-garbage-collector-controller",
	"-certificatesigningrequest-signing-controller", "-certificatesigningrequest-cleaner-controller",
	"-certificatesigningrequest-approving-controller", "-node-lifecycle-controller", "-taint-eviction-controller",
	"-persistentvolume-binder-controller", "-horizontal-pod-autoscaler-controller",
	"-resourceclaim-controller"}

// sessionCompactionInterval is how often a Session's server compacts its
// store's history: its controllers' watches and lists need little of it.
const sessionCompactionInterval = 5 * time.Second

// instance is a running in-process server and an administrator's
// connection to it.
type instance struct {
	srv   *server.Server
	dir   string
	admin *rest.Config
	// impersonatorToken authenticates the request's impersonator.
	impersonatorToken string
	// expandWorkloads: ServerConfig.ExpandWorkloads.
	expandWorkloads bool
	// defaultServiceAccounts: the service-account controller runs, so a
	// namespace gets its default ServiceAccount.
	defaultServiceAccounts bool
}

// startServer starts a server on memory storage with c's settings; one
// that authenticates impersonator too, when not nil.
func startServer(ctx context.Context, c ServerConfig, impersonator *User) (*instance, error) {
	dir, err := os.MkdirTemp("", "admitd-eval-")
	if err != nil {
		return nil, err
	}
	opts := serverOptions(c, dir)
	token := ""
	if impersonator != nil {
		if opts.TokenAuthFile, token, err = writeImpersonatorToken(dir, *impersonator); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	srv, err := server.Start(ctx, opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, &ConfigError{Err: fmt.Errorf("starting the in-process server: %w", err)}
	}
	admin := &rest.Config{Host: srv.URL, QPS: -1, UserAgent: "admitd-eval",
		TLSClientConfig: rest.TLSClientConfig{CAData: srv.CAPEM, CertData: srv.AdminCertPEM, KeyData: srv.AdminKeyPEM}}
	sel, _ := controllers.ParseControllers(opts.Controllers) // Start checked them
	return &instance{srv: srv, dir: dir, admin: admin, impersonatorToken: token, expandWorkloads: c.ExpandWorkloads,
		defaultServiceAccounts: sel.Enabled(controllers.ServiceAccountControllerName)}, nil
}

func serverOptions(c ServerConfig, dir string) server.Options {
	o := server.DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = dir, 0, "memory", "-"
	o.BindAddress = "127.0.0.1"
	o.EnableAdmissionPlugins, o.DisableAdmissionPlugins = c.EnableAdmissionPlugins, c.DisableAdmissionPlugins
	o.AdmissionControlConfigFile, o.FeatureGates = c.AdmissionControlConfigFile, c.FeatureGates
	o.AllowPrivileged, o.ServiceMap = c.AllowPrivileged, c.ServiceMap
	o.AuthorizationModes = c.AuthorizationModes
	if len(o.AuthorizationModes) == 0 {
		o.AuthorizationModes = []string{auth.ModeAlwaysAllow}
	}
	o.Quota.Controller = c.QuotaController
	o.CopiedObjects = c.copiedObjects
	if c.copiedObjects {
		// a session writes every object it evaluates several times: the
		// history of 5 minutes of that (serve's default) is most of its memory
		o.CompactionInterval = sessionCompactionInterval
	}
	o.Controllers = c.Controllers
	if o.Controllers == nil {
		o.Controllers = DefaultControllers
		if c.ExpandWorkloads {
			o.Controllers = withWorkloadControllers(DefaultControllers)
		}
	}
	o.Logger = c.Logger
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// withWorkloadControllers is list without its exclusions of the workload
// controllers.
func withWorkloadControllers(list []string) []string {
	var out []string
	for _, name := range list {
		if !slices.Contains(WorkloadControllers, strings.TrimPrefix(name, "-")) {
			out = append(out, name)
		}
	}
	return out
}

func (in *instance) close() error {
	return errors.Join(in.srv.Close(), os.RemoveAll(in.dir))
}

// ConfigError is an error in the configuration or the request given (a
// file that does not read, an object the server refuses to create): not
// an admission decision. `admitd eval` exits with status 2 on it.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }
