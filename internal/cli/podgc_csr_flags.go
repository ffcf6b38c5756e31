package cli

import (
	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/controllers/csrsigning"
	"github.com/admitd/admitd/internal/controllers/legacytokencleaner"
	"github.com/admitd/admitd/internal/controllers/nodelifecycle"
	"github.com/admitd/admitd/internal/controllers/podgc"
	"github.com/admitd/admitd/internal/server"
)

// addPodGCFlags registers kube-controller-manager's
// --terminated-pod-gc-threshold, and the hidden --pod-gc-check-period and
// --pod-gc-quarantine-time for tests (kube-controller-manager has them
// fixed).
func addPodGCFlags(fs *pflag.FlagSet, o *server.PodGCOptions) {
	o.TerminatedPodThreshold = fs.Int("terminated-pod-gc-threshold", podgc.DefaultTerminatedPodThreshold,
		"Number of terminated pods that can exist before the terminated pod garbage collector starts deleting terminated pods. If <= 0, the terminated pod garbage collector is disabled.")
	fs.DurationVar(&o.CheckPeriod, "pod-gc-check-period", podgc.DefaultCheckPeriod, "time between the pod garbage collector's passes (fixed in kube-controller-manager; for tests)")
	fs.DurationVar(&o.QuarantineTime, "pod-gc-quarantine-time", podgc.DefaultQuarantineTime, "how long a node must be missing before the pod garbage collector deletes its pods (fixed in kube-controller-manager; for tests)")
	_ = fs.MarkHidden("pod-gc-check-period")
	_ = fs.MarkHidden("pod-gc-quarantine-time")
}

// addCSRSigningFlags registers kube-controller-manager's
// --cluster-signing-* flags.
func addCSRSigningFlags(fs *pflag.FlagSet, o *server.CSRSigningOptions) {
	fs.StringVar(&o.ClusterSigningCertFile, "cluster-signing-cert-file", "",
		"Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates.  If specified, no more specific --cluster-signing-* flag may be specified. "+
			"Without any --cluster-signing-* file, admitd's own CA (in --data-dir, the one client certificates are verified with) signs for the kube-apiserver-client and kube-apiserver-client-kubelet signers, and nothing signs for kubelet-serving (that CA also issued the server's own certificate).")
	fs.StringVar(&o.ClusterSigningKeyFile, "cluster-signing-key-file", "",
		"Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates.  If specified, no more specific --cluster-signing-* flag may be specified.")
	fs.DurationVar(&o.Duration, "cluster-signing-duration", csrsigning.DefaultDuration,
		"The max length of duration signed certificates will be given.  Individual CSRs may request shorter certs by setting spec.expirationSeconds.")
	for _, s := range []struct {
		flag, signer string
		cert, key    *string
	}{
		{"kube-apiserver-client", csrsigning.KubeAPIServerClient, &o.KubeAPIServerClientCertFile, &o.KubeAPIServerClientKeyFile},
		{"kubelet-client", csrsigning.KubeAPIServerClientKubelet, &o.KubeletClientCertFile, &o.KubeletClientKeyFile},
		{"kubelet-serving", csrsigning.KubeletServing, &o.KubeletServingCertFile, &o.KubeletServingKeyFile},
		{"legacy-unknown", csrsigning.LegacyUnknown, &o.LegacyUnknownCertFile, &o.LegacyUnknownKeyFile},
	} {
		fs.StringVar(s.cert, "cluster-signing-"+s.flag+"-cert-file", "",
			"Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the "+s.signer+" signer.  If specified, --cluster-signing-{cert,key}-file must not be set.")
		fs.StringVar(s.key, "cluster-signing-"+s.flag+"-key-file", "",
			"Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the "+s.signer+" signer.  If specified, --cluster-signing-{cert,key}-file must not be set.")
	}
}

// addNodeLifecycleFlags registers kube-controller-manager's flags of the
// node lifecycle controller.
func addNodeLifecycleFlags(fs *pflag.FlagSet, o *server.NodeLifecycleOptions) {
	fs.DurationVar(&o.MonitorPeriod, "node-monitor-period", nodelifecycle.DefaultMonitorPeriod,
		"The period for syncing NodeStatus in cloud-node-lifecycle-controller.")
	fs.DurationVar(&o.MonitorGracePeriod, "node-monitor-grace-period", nodelifecycle.DefaultMonitorGracePeriod,
		"Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N times more than kubelet's nodeStatusUpdateFrequency, where N means number of retries allowed for kubelet to post node status. This value should also be greater than the sum of HTTP2_PING_TIMEOUT_SECONDS and HTTP2_READ_IDLE_TIMEOUT_SECONDS")
	fs.DurationVar(&o.StartupGracePeriod, "node-startup-grace-period", nodelifecycle.DefaultStartupGracePeriod,
		"Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.")
	o.EvictionRate = fs.Float32("node-eviction-rate", nodelifecycle.DefaultEvictionRate,
		"Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters.")
	o.SecondaryEvictionRate = fs.Float32("secondary-node-eviction-rate", nodelifecycle.DefaultSecondaryEvictionRate,
		"Number of nodes per second on which pods are deleted in case of node failure when a zone is unhealthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters. This value is implicitly overridden to 0 if the cluster size is smaller than --large-cluster-size-threshold.")
	fs.IntVar(&o.LargeClusterThreshold, "large-cluster-size-threshold", nodelifecycle.DefaultLargeClusterThreshold,
		"Number of nodes from which node-lifecycle-controller treats the cluster as large for the eviction logic purposes. --secondary-node-eviction-rate is implicitly overridden to 0 for clusters this size or smaller. Notice: If nodes reside in multiple zones, this threshold will be considered as zone node size threshold for each zone to determine node eviction rate independently.")
	fs.Float32Var(&o.UnhealthyZoneThreshold, "unhealthy-zone-threshold", nodelifecycle.DefaultUnhealthyZoneThreshold,
		"Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone to be treated as unhealthy. ")
}

// addLegacyTokenCleanerFlags registers kube-controller-manager's
// --legacy-service-account-token-clean-up-period, and the hidden
// --legacy-service-account-token-cleaner-sync-period for tests
// (kube-controller-manager has it fixed at a day).
func addLegacyTokenCleanerFlags(fs *pflag.FlagSet, o *server.LegacyTokenCleanerOptions) {
	o.CleanUpPeriod = fs.Duration("legacy-service-account-token-clean-up-period", legacytokencleaner.DefaultCleanUpPeriod,
		"The period of time since the last usage of an legacy service account token before it can be deleted.")
	fs.DurationVar(&o.SyncInterval, "legacy-service-account-token-cleaner-sync-period", legacytokencleaner.DefaultSyncInterval,
		"time between the legacy service account token cleaner's passes (fixed in kube-controller-manager; for tests)")
	_ = fs.MarkHidden("legacy-service-account-token-cleaner-sync-period")
}
