package cli

import (
	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/server"
)

// addEtcdFlags adds kube-apiserver's etcd flags.
func addEtcdFlags(f *pflag.FlagSet, o *server.Options) {
	f.StringSliceVar(&o.Etcd.Servers, "etcd-servers", nil, "List of etcd servers to connect with (scheme://ip:port), comma separated. When set, objects are stored in etcd instead of --storage.")
	f.StringVar(&o.Etcd.Prefix, "etcd-prefix", server.DefaultEtcdPrefix, "The prefix to prepend to all resource paths in etcd.")
	f.StringVar(&o.Etcd.CAFile, "etcd-cafile", "", "SSL Certificate Authority file used to secure etcd communication.")
	f.StringVar(&o.Etcd.CertFile, "etcd-certfile", "", "SSL certification file used to secure etcd communication.")
	f.StringVar(&o.Etcd.KeyFile, "etcd-keyfile", "", "SSL key file used to secure etcd communication.")
	f.DurationVar(&o.Etcd.HealthcheckTimeout, "etcd-healthcheck-timeout", server.DefaultStorageCheckTimeout, "The timeout to use when checking storage health (the \"etcd\" check of /healthz, /livez and /readyz; the embedded store's too).")
	f.DurationVar(&o.Etcd.ReadycheckTimeout, "etcd-readycheck-timeout", server.DefaultStorageCheckTimeout, "The timeout to use when checking storage readiness (the \"etcd-readiness\" check of /readyz).")
	f.DurationVar(&o.Etcd.CountMetricPollPeriod, "etcd-count-metric-poll-period", o.Etcd.CountMetricPollPeriod, "Frequency of polling storage for number of resources per type (apiserver_resource_objects). 0 disables the metric collection.")
	f.DurationVar(&o.CompactionInterval, "etcd-compaction-interval", o.CompactionInterval, "The interval of compaction requests. If 0, the compaction request from apiserver is disabled. (Same as --storage-compaction-interval.)")
}

// addLeaderElectionFlags adds kube-controller-manager's leader election
// flags, which elect the instance that runs the controllers when several
// share one etcd.
func addLeaderElectionFlags(f *pflag.FlagSet, o *server.LeaderElectionOptions) {
	f.BoolVar(&o.Enabled, "leader-elect", o.Enabled, "with --etcd-servers, run the controllers only while holding a coordination.k8s.io Lease, so that one of several instances sharing the etcd runs them (an embedded store serves a single instance, whose controllers always run)")
	f.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "how long other instances wait after the leader's last renewal before taking the lease over: the longest time no instance runs the controllers after the leader dies")
	f.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "how long the leader retries a failed renewal before it stops its controllers; less than the lease duration")
	f.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "the wait between attempts to acquire or renew the lease")
	f.StringVar(&o.ResourceName, "leader-elect-resource-name", o.ResourceName, "the name of the Lease")
	f.StringVar(&o.ResourceNamespace, "leader-elect-resource-namespace", o.ResourceNamespace, "the namespace of the Lease")
}
