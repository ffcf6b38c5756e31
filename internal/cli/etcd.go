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
	f.DurationVar(&o.CompactionInterval, "etcd-compaction-interval", o.CompactionInterval, "The interval of compaction requests. If 0, the compaction request from apiserver is disabled. (Same as --storage-compaction-interval.)")
}
