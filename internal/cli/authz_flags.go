package cli

import (
	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/server"
)

// addAuthorizationWebhookFlags adds kube-apiserver's
// --authorization-webhook-* flags.
func addAuthorizationWebhookFlags(f *pflag.FlagSet, o *server.AuthorizationWebhookOptions) {
	f.StringVar(&o.ConfigFile, "authorization-webhook-config-file", o.ConfigFile,
		"kubeconfig file describing the remote authorizer of --authorization-mode=Webhook (server, certificate-authority, client certificate or token)")
	f.StringVar(&o.Version, "authorization-webhook-version", o.Version,
		"authorization.k8s.io version of the SubjectAccessReview sent to the webhook: v1 or v1beta1")
	f.DurationVar(&o.AuthorizedTTL, "authorization-webhook-cache-authorized-ttl", o.AuthorizedTTL,
		"how long the webhook's allowing answers are cached")
	f.DurationVar(&o.UnauthorizedTTL, "authorization-webhook-cache-unauthorized-ttl", o.UnauthorizedTTL,
		"how long the webhook's other answers are cached")
}
