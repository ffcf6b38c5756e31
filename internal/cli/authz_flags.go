package cli

import (
	"errors"

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

// addAuthorizationConfigFlag adds kube-apiserver's --authorization-config.
func addAuthorizationConfigFlag(f *pflag.FlagSet, path *string) {
	f.StringVar(path, "authorization-config", *path,
		"AuthorizationConfiguration file (apiserver.config.k8s.io/v1) with the chain of authorizers, reloaded when it changes; "+
			"mutually exclusive with --authorization-mode and --authorization-webhook-*")
}

// checkAuthorizationFlags refuses --authorization-config with the flags it
// replaces, with kube-apiserver's message.
func checkAuthorizationFlags(f *pflag.FlagSet) error {
	if !f.Changed("authorization-config") {
		return nil
	}
	for _, name := range []string{"authorization-mode", "authorization-webhook-config-file", "authorization-webhook-version",
		"authorization-webhook-cache-authorized-ttl", "authorization-webhook-cache-unauthorized-ttl"} {
		if f.Changed(name) {
			return errors.New("--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined")
		}
	}
	return nil
}
