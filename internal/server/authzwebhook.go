package server

import (
	"errors"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/authzwebhook"
)

// AuthorizationWebhookOptions configure --authorization-mode=Webhook, as
// kube-apiserver's --authorization-webhook-* flags.
type AuthorizationWebhookOptions struct {
	// ConfigFile is a kubeconfig file describing the remote authorizer:
	// its server URL, CA, and the client certificate or token admitd
	// presents. Required with the Webhook mode, refused without it.
	ConfigFile string
	// Version is the SubjectAccessReview version sent, v1 or v1beta1.
	// Default v1beta1, as kube-apiserver.
	Version string
	// AuthorizedTTL and UnauthorizedTTL are how long answers that allow
	// and answers that do not are cached. Defaults 5m and 30s; 0 does not
	// cache.
	AuthorizedTTL, UnauthorizedTTL time.Duration
}

// DefaultAuthorizationWebhookOptions are kube-apiserver's defaults.
func DefaultAuthorizationWebhookOptions() AuthorizationWebhookOptions {
	d := authzwebhook.DefaultOptions()
	return AuthorizationWebhookOptions{Version: d.Version, AuthorizedTTL: d.AuthorizedTTL, UnauthorizedTTL: d.UnauthorizedTTL}
}

// validate checks the options against the modes, with kube-apiserver's
// messages.
func (o AuthorizationWebhookOptions) validate(modes []string) error {
	webhook := slices.Contains(modes, auth.ModeWebhook)
	var errs []error
	if webhook && o.ConfigFile == "" {
		errs = append(errs, errors.New("authorization-mode Webhook's authorization config file not passed"))
	}
	if !webhook && o.ConfigFile != "" {
		errs = append(errs, errors.New("cannot specify --authorization-webhook-config-file without mode Webhook"))
	}
	return errors.Join(errs...)
}

// authorizer is the Webhook mode's authorizer, nil when the mode is off.
// A failed call has no opinion, as kube-apiserver's for this mode. Its
// metrics are registered on reg, labelled with the name kube-apiserver
// gives it.
func (o AuthorizationWebhookOptions) authorizer(modes []string, reg prometheus.Registerer) (auth.Authorizer, error) {
	if !slices.Contains(modes, auth.ModeWebhook) {
		return nil, nil
	}
	wo := authzwebhook.DefaultOptions()
	wo.Version, wo.AuthorizedTTL, wo.UnauthorizedTTL = o.Version, o.AuthorizedTTL, o.UnauthorizedTTL
	wo.Name, wo.Metrics = webhookModeName, authzwebhook.NewMetrics(reg)
	return authzwebhook.NewFromKubeconfig(o.ConfigFile, wo)
}
