// Package authzwebhook is the Webhook authorizer: it asks a remote
// authorizer by POSTing it a SubjectAccessReview (authorization.k8s.io v1
// or v1beta1), as kube-apiserver's --authorization-mode=Webhook, and
// caches its answers for a while.
//
// It is not a SubjectAccessReview endpoint (that is the API server's own
// authorization.k8s.io resources).
package authzwebhook

import (
	"errors"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/admitd/admitd/internal/auth"
)

// The SubjectAccessReview versions a remote authorizer may be asked in.
const (
	VersionV1      = "v1"
	VersionV1beta1 = "v1beta1"
)

// cacheSize is how many decisions are kept, as upstream.
const cacheSize = 8192

// ErrBothAllowedAndDenied is returned, with a denial, when an answer both
// allows and denies.
var ErrBothAllowedAndDenied = errors.New("webhook subject access review returned both allow and deny response")

// DefaultBackoff is how failed calls are retried, as kube-apiserver's
// authorization webhook: five attempts, from half a second apart.
func DefaultBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// Options configure a Webhook authorizer.
type Options struct {
	// Version is the SubjectAccessReview version sent: VersionV1 or
	// VersionV1beta1. Default VersionV1beta1, as kube-apiserver's
	// --authorization-webhook-version.
	Version string
	// AuthorizedTTL and UnauthorizedTTL are how long an allowing and any
	// other answer is cached; 0 does not cache. kube-apiserver's defaults
	// are 5m and 30s (DefaultOptions).
	AuthorizedTTL, UnauthorizedTTL time.Duration
	// Timeout bounds one call. Default 30s, as kube-apiserver's for
	// --authorization-mode=Webhook.
	Timeout time.Duration
	// Backoff retries transient failures; zero Steps: DefaultBackoff.
	Backoff wait.Backoff
	// DecisionOnError is the decision when the call fails: DecisionNoOpinion
	// (the zero Options' value is DecisionDeny, so set it; DefaultOptions
	// does) or DecisionDeny.
	DecisionOnError auth.Decision
	// MatchConditions, when set, must all hold for the webhook to be asked;
	// otherwise it has no opinion. An evaluation error gives
	// DecisionOnError.
	MatchConditions *MatchConditions
	// Clock defaults to the real clock; tests replace it to expire the
	// cache.
	Clock clock.PassiveClock
	// Name labels the metrics: the authorizer's name in an
	// AuthorizationConfiguration, "default" for --authorization-mode=Webhook
	// (kube-apiserver's name for it).
	Name string
	// Metrics, when set, records calls, failing open and match condition
	// evaluations.
	Metrics *Metrics
}

// DefaultOptions are kube-apiserver's for --authorization-mode=Webhook.
func DefaultOptions() Options {
	return Options{Version: VersionV1beta1, AuthorizedTTL: 5 * time.Minute, UnauthorizedTTL: 30 * time.Second,
		Timeout: 30 * time.Second, Backoff: DefaultBackoff(), DecisionOnError: auth.DecisionNoOpinion}
}

// Authorizer asks a remote authorizer.
type Authorizer struct {
	caller          *caller
	version         string
	authorizedTTL   time.Duration
	unauthorizedTTL time.Duration
	decisionOnError auth.Decision
	match           *MatchConditions
	metrics         *Metrics
	cache           *cache.LRUExpireCache
}

var (
	_ auth.Authorizer    = (*Authorizer)(nil)
	_ auth.RulesReviewer = (*Authorizer)(nil)
)

// NewFromKubeconfig returns an authorizer calling the server of the
// kubeconfig file at path.
func NewFromKubeconfig(path string, o Options) (*Authorizer, error) {
	cfg, err := loadKubeconfig(path)
	if err != nil {
		return nil, err
	}
	return New(cfg, o)
}

// New returns an authorizer calling cfg.Host with cfg's TLS settings and
// credentials.
func New(cfg *rest.Config, o Options) (*Authorizer, error) {
	var apiVersion string
	switch o.Version {
	case VersionV1:
		apiVersion = authorizationv1.SchemeGroupVersion.String()
	case VersionV1beta1:
		apiVersion = authorizationv1beta1.SchemeGroupVersion.String()
	default:
		return nil, fmt.Errorf("unsupported webhook authorizer version %q, supported versions are %q, %q",
			o.Version, VersionV1, VersionV1beta1)
	}
	cfg = rest.CopyConfig(cfg)
	if o.Timeout > 0 {
		cfg.Timeout = o.Timeout
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("authorization webhook client: %w", err)
	}
	if o.Backoff.Steps <= 0 {
		o.Backoff = DefaultBackoff()
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &Authorizer{
		caller: &caller{client: client, url: cfg.Host, apiVersion: apiVersion, backoff: o.Backoff,
			name: o.Name, metrics: o.Metrics},
		version: o.Version, authorizedTTL: o.AuthorizedTTL, unauthorizedTTL: o.UnauthorizedTTL,
		decisionOnError: o.DecisionOnError, match: o.MatchConditions, metrics: o.Metrics,
		cache: cache.NewLRUExpireCacheWithClock(cacheSize, o.Clock),
	}, nil
}
