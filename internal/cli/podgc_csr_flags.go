package cli

import (
	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/controllers/csrsigning"
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
