package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"sync"
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
	path     string
	by       modeAuthorizers
	metrics  *auth.DecisionMetrics
	webhooks *authzwebhook.Metrics
	reloads  *authzReloadMetrics
	log      *slog.Logger
	current  atomic.Pointer[auth.AuthorizerUnion]

	// mu serialises loads; lastRead is the content last read (valid or
	// not) and lastConfig the configuration of the current chain.
	mu         sync.Mutex
	lastRead   []byte
	lastConfig *api.AuthorizationConfiguration
}

var (
	_ auth.Authorizer    = (*configuredAuthorizer)(nil)
	_ auth.RulesReviewer = (*configuredAuthorizer)(nil)
)

// newConfiguredAuthorizer builds the chain of the file at path; an invalid
// file is an error. Its metrics (decisions, webhooks, reloads) are
// registered on reg.
func newConfiguredAuthorizer(path string, by modeAuthorizers, reg prometheus.Registerer, log *slog.Logger) (*configuredAuthorizer, error) {
	c := &configuredAuthorizer{path: path, by: by, metrics: auth.NewDecisionMetrics(reg),
		webhooks: authzwebhook.NewMetrics(reg), reloads: newAuthzReloadMetrics(reg), log: log}
	applied, err := c.load()
	if err != nil {
		return nil, err
	}
	c.reloads.applied(applied)
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
// one and returns its content. As upstream, nothing is returned (nor an
// error) when the file is as last read, even if that was invalid, or when
// its configuration is the current one.
func (c *configuredAuthorizer) load() (applied []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data, err := os.ReadFile(c.path)
	if err != nil {
		return nil, fmt.Errorf("reading --authorization-config: %w", err)
	}
	if c.lastRead != nil && bytes.Equal(data, c.lastRead) {
		return nil, nil
	}
	c.lastRead = data
	cfg, err := authzconfig.Parse(c.path, data)
	if err != nil {
		return nil, err
	}
	if reflect.DeepEqual(cfg, c.lastConfig) {
		return nil, nil
	}
	union, err := buildConfiguredChain(cfg, c.by, c.metrics, c.webhooks)
	if err != nil {
		return nil, err
	}
	c.current.Store(&union)
	c.lastConfig = cfg
	return data, nil
}

// buildConfiguredChain is system:masters allowed, then the configured
// authorizers in order under their configured names, each metered.
func buildConfiguredChain(cfg *api.AuthorizationConfiguration, by modeAuthorizers, metrics *auth.DecisionMetrics,
	webhooks *authzwebhook.Metrics) (auth.AuthorizerUnion, error) {
	union := privilegedFirst()
	for _, a := range cfg.Authorizers {
		n := auth.Named{Type: string(a.Type), Name: a.Name}
		if a.Type == api.AuthorizerType(auth.ModeWebhook) {
			w, err := configuredWebhook(a.Name, a.Webhook, webhooks)
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

// configuredWebhook is the authorizer of a validated webhook entry, its
// metrics labelled with the entry's name.
func configuredWebhook(name string, w *api.WebhookConfiguration, metrics *authzwebhook.Metrics) (*authzwebhook.Authorizer, error) {
	o := authzwebhook.DefaultOptions()
	o.Name, o.Metrics = name, metrics
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
