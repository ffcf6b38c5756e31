package cli

import (
	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/server"
)

// addServiceIPFlags registers kube-apiserver's Service address and node
// port flags on fs.
func addServiceIPFlags(fs *pflag.FlagSet, o *server.Options) {
	fs.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", server.DefaultServiceClusterIPRange,
		"CIDR of the default ServiceCIDR, which Service cluster IPs are allocated from; its first address is the kubernetes Service's")
	fs.StringVar(&o.ServiceNodePortRange, "service-node-port-range", "30000-32767",
		"port range (first-last, inclusive) node ports of NodePort and LoadBalancer Services are allocated from")
}
