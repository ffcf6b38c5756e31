package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	api "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/authzconfig"
	"github.com/admitd/admitd/internal/auth/authzwebhook"
)

// configuredAuthorizer is the chain of --authorization-config, swapped
// whole when the file changes (authzconfig_reload.go).
type configuredAuthorizer struct {
	path    string
	by      modeAuthorizers
	metrics *auth.DecisionMetrics
	log     *slog.Logger
	current atomic.Pointer[auth.AuthorizerUnion]
	// digest is the content hash of the file the current chain was built
	// from.
	digest atomic.Value
}

var (
	_ auth.Authorizer    = (*configuredAuthorizer)(nil)
	_ auth.RulesReviewer = (*configuredAuthorizer)(nil)
)

// newConfiguredAuthorizer builds the chain of the file at path; an invalid
// file is an error.
func newConfiguredAuthorizer(path string, by modeAuthorizers, reg prometheus.Registerer, log *slog.Logger) (*configuredAuthorizer, error) {
	c := &configuredAuthorizer{path: path, by: by, metrics: auth.NewDecisionMetrics(reg), log: log}
	if _, err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// Authorize asks the current chain.
func (c *configuredAuthorizer) Authorize(ctx context.Context, a auth.Attributes) (auth.Decision, string, error) {
	return c.current.Load().Authorize(ctx, a)
}

// RulesReview lists the current chain's rules.
func (c *configuredAuthorizer) RulesReview(user authenticationv1.UserInfo, namespace string) (
	[]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	return c.current.Load().RulesReview(user, namespace)
}

// load reads the file and, when it is valid, makes its chain the current
// one; changed is false when the file is as last loaded.
func (c *configuredAuthorizer) load() (changed bool, err error) {
	cfg, digest, err := authzconfig.LoadWithDigest(c.path)
	if err != nil {
		return false, err
	}
	if old, _ := c.digest.Load().(string); old == digest {
		return false, nil
	}
	union, err := buildConfiguredChain(cfg, c.by, c.metrics)
	if err != nil {
		return false, err
	}
	c.current.Store(&union)
	c.digest.Store(digest)
	return true, nil
}

// buildConfiguredChain is system:masters allowed, then the configured
// authorizers in order under their configured names, each metered.
func buildConfiguredChain(cfg *api.AuthorizationConfiguration, by modeAuthorizers, metrics *auth.DecisionMetrics) (auth.AuthorizerUnion, error) {
	union := privilegedFirst()
	for _, a := range cfg.Authorizers {
		n := auth.Named{Type: string(a.Type), Name: a.Name}
		if a.Type == api.AuthorizerType(auth.ModeWebhook) {
			w, err := configuredWebhook(a.Webhook)
			if err != nil {
				return nil, fmt.Errorf("authorizer %s: %w", a.Name, err)
			}
			n.Authorizer = w
		} else if builtin, ok := by.builtin(string(a.Type)); ok {
			n.Authorizer = builtin
		} else {
			return nil, fmt.Errorf("authorizer %s: type %s is not served by admitd", a.Name, a.Type)
		}
		union = append(union, metrics.Instrument(n))
	}
	return union, nil
}

// configuredWebhook is the authorizer of a validated webhook entry.
func configuredWebhook(w *api.WebhookConfiguration) (*authzwebhook.Authorizer, error) {
	o := authzwebhook.DefaultOptions()
	o.Version, o.Timeout = w.SubjectAccessReviewVersion, w.Timeout.Duration
	o.AuthorizedTTL, o.UnauthorizedTTL = 0, 0
	if w.CacheAuthorizedRequests {
		o.AuthorizedTTL = w.AuthorizedTTL.Duration
	}
	if w.CacheUnauthorizedRequests {
		o.UnauthorizedTTL = w.UnauthorizedTTL.Duration
	}
	m, err := authzwebhook.NewMatchConditions(authzconfig.Expressions(w.MatchConditions))
	if err != nil {
		return nil, err
	}
	o.MatchConditions = m
	if w.FailurePolicy == api.FailurePolicyDeny {
		o.DecisionOnError = auth.DecisionDeny
	}
	if w.ConnectionInfo.Type == api.AuthorizationWebhookConnectionInfoTypeInCluster {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, err
		}
		return authzwebhook.New(cfg, o)
	}
	return authzwebhook.NewFromKubeconfig(*w.ConnectionInfo.KubeConfigFile, o)
}
