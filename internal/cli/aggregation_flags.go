package cli

import (
	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/server"
)

// addAggregationFlags registers kube-apiserver's front-proxy and
// aggregation-layer flags on fs.
func addAggregationFlags(fs *pflag.FlagSet, o *server.AggregationOptions) {
	fs.StringVar(&o.RequestHeaderClientCAFile, "requestheader-client-ca-file", "",
		"root certificate bundle to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers (default: a front-proxy CA generated in --data-dir, with the kubeadm header settings, unless a --proxy-client-* file is given)")
	fs.StringSliceVar(&o.RequestHeaderAllowedNames, "requestheader-allowed-names", nil,
		"client certificate common names allowed to provide usernames in headers; empty allows any certificate of --requestheader-client-ca-file")
	fs.StringSliceVar(&o.RequestHeaderUsernameHeaders, "requestheader-username-headers", nil, "request headers to inspect for usernames (X-Remote-User is common)")
	fs.StringSliceVar(&o.RequestHeaderUIDHeaders, "requestheader-uid-headers", nil, "request headers to inspect for UIDs (X-Remote-Uid is suggested)")
	fs.StringSliceVar(&o.RequestHeaderGroupHeaders, "requestheader-group-headers", nil, "request headers to inspect for groups (X-Remote-Group is suggested)")
	fs.StringSliceVar(&o.RequestHeaderExtraHeadersPrefix, "requestheader-extra-headers-prefix", nil, "request header prefixes to inspect (X-Remote-Extra- is suggested)")
	fs.StringVar(&o.ProxyClientCertFile, "proxy-client-cert-file", "",
		"client certificate the aggregation layer presents to extension API servers; it should be signed by the CA of --requestheader-client-ca-file")
	fs.StringVar(&o.ProxyClientKeyFile, "proxy-client-key-file", "", "private key of --proxy-client-cert-file")
	fs.BoolVar(&o.EnableAggregatorRouting, "enable-aggregator-routing", false, "route requests of aggregated APIs to an endpoint IP of their Service rather than its cluster IP")
}
