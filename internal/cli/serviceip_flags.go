package cli

import (
	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/server"
)

// addServiceIPFlags registers kube-apiserver's Service address and node
// port flags on fs.
func addServiceIPFlags(fs *pflag.FlagSet, o *server.Options) {
	fs.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", "10.0.0.0/24",
		"CIDR Service cluster IPs are allocated from; its first address is kept for the kubernetes Service")
	fs.StringVar(&o.ServiceNodePortRange, "service-node-port-range", "30000-32767",
		"port range (first-last, inclusive) node ports of NodePort and LoadBalancer Services are allocated from")
}
