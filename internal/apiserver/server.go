// Package apiserver serves the Kubernetes REST API over admitd's storage:
// routing, discovery, the verbs (one file each), watch, patch, dry-run and
// Status errors. Every write goes through the admission chain exactly where
// upstream calls it.
//
// It is the server, not a library: the admission chain, storage and the
// resource catalogue are injected.
package apiserver

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/flowcontrol"
	"github.com/admitd/admitd/internal/ipallocator"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/serviceaccount"
	"github.com/admitd/admitd/internal/serviceip"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
)

// Authenticator identifies the user of a request; ok=false means the request
// carried no credentials it understands.
type Authenticator interface {
	Authenticate(r *http.Request) (user authenticationv1.UserInfo, ok bool, err error)
}

// Config holds everything the server needs. Zero values are documented per
// field.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	// BootstrapFieldSets are the field sets the objects the server writes
	// itself record, computed at build time, by bootstrapFieldSetKey
	// (bootstrapfieldsets.go); nil computes each live.
	BootstrapFieldSets map[string]string
	// OnBootstrapFieldSet, when set, has every such set computed live and
	// reported with its key, from concurrent writes (to build
	// BootstrapFieldSets).
	OnBootstrapFieldSet func(key, fieldSet string)
	// Admission is the chain every write goes through; nil admits all.
	Admission admission.Interface
	// Authenticate identifies the user a request acts as and, when it
	// impersonates, the requester; nil treats every request as the
	// anonymous user.
	Authenticate func(r *http.Request) (user authenticationv1.UserInfo, requester *authenticationv1.UserInfo, err error)
	// AuthenticationMetrics counts the requests of the server's own
	// loopback clients, which Authenticate does not see, as authenticated
	// (upstream's loopback client presents a token its authenticator
	// accepts); nil counts nothing.
	AuthenticationMetrics *auth.AuthenticationMetrics
	// Authorizer decides, after authentication, whether a request may run
	// (it is asked for every request but the public health and version
	// endpoints), and answers the access reviews (SubjectAccessReview and
	// its local and self variants); SelfSubjectRulesReview lists its rules
	// when it is an auth.RulesReviewer, else answers incomplete. nil allows
	// everything, as AlwaysAllow.
	Authorizer auth.Authorizer
	// AuthorizationAttempts counts the authorizations of requests (not
	// those of access reviews); nil counts nothing.
	AuthorizationAttempts *auth.AuthorizationAttempts
	// TokenAuthenticator answers TokenReview before the service-account
	// tokens of TokenIssuer are tried; nil leaves only those.
	TokenAuthenticator auth.AudienceTokenAuthenticator
	// ServiceAccountAuthenticators check service-account tokens for
	// TokenReview (legacy and bound, with the server's keys and issuers);
	// nil checks only the bound tokens TokenIssuer signs.
	ServiceAccountAuthenticators []auth.AudienceTokenAuthenticator
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// MaxRequestBodyBytes defaults to 3 MiB, as upstream.
	MaxRequestBodyBytes int64
	// RequestTimeout bounds every request that is not long-running
	// (watches, proxies, a pod's streams): kube-apiserver's
	// --request-timeout; default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// GoawayChance is kube-apiserver's --goaway-chance: the probability
	// that an HTTP/2 request's answer closes its connection (a GOAWAY), so
	// that clients behind a load balancer spread over new servers; 0 never.
	GoawayChance float64
	// OnWatcherTerminated hears of a watch ended because its client did
	// not keep up (upstream's apiserver_terminated_watchers_total); nil
	// counts nothing.
	OnWatcherTerminated func(group, resource string)
	// FlowControl is API Priority and Fairness: every request but the
	// long-running ones (watches until they are initialized) is classified
	// and seated before it is authorized; nil leaves the in-flight limits.
	FlowControl *flowcontrol.Controller
	// MaxRequestsInflight and MaxMutatingRequestsInflight limit read-only
	// and mutating requests at once when FlowControl is nil (0: no limit).
	MaxRequestsInflight         int
	MaxMutatingRequestsInflight int
	// LongRunningPaths are paths of Extra handlers that stream (as a
	// watch) and so run without RequestTimeout.
	LongRunningPaths []string
	// MinRequestTimeout is kube-apiserver's --min-request-timeout: a watch
	// without timeoutSeconds ends at random between it and twice it;
	// default DefaultMinRequestTimeout.
	MinRequestTimeout time.Duration
	// JSONPatchMaxCopyBytes bounds the bytes the copy operations of one
	// JSON patch may add (a patch's, a mutating webhook's or a mutating
	// policy's); default 3 MiB, as upstream. The bound is process-wide, as
	// upstream's: the smallest any server of the process asks for.
	JSONPatchMaxCopyBytes int64
	// BookmarkInterval is how often a watch that allows bookmarks gets one
	// when it has progressed; default 1 minute (upstream's watch cache
	// sends them about as often).
	BookmarkInterval time.Duration
	// RevisionWait is how long a get or list naming a resourceVersion the
	// store has not reached waits for it before upstream's 504 "Too large
	// resource version"; default 3 s, as upstream's watch cache.
	RevisionWait time.Duration
	// GracefulPodDeletion deletes pods gracefully, as kube-apiserver: a
	// bound pod stays, with a deletionTimestamp its grace period away,
	// until its kubelet deletes it (see graceful.go). Off, a pod goes at
	// once: without kubelets nothing would ever finish the deletion. On
	// with simulated nodes.
	GracefulPodDeletion bool
	// Now defaults to time.Now.
	Now func() time.Time
	// Ready reports whether the server's caches have listed once, for
	// /readyz's informer-sync check; nil means always.
	Ready func() bool
	// StorageHealth is the storage check of /healthz, /livez and /readyz
	// and StorageReadiness /readyz's: "etcd" and "etcd-readiness", as
	// kube-apiserver names them whatever the backend; nil passes.
	StorageHealth, StorageReadiness func(context.Context) error
	// StartChecks are the checks named after kube-apiserver's post-start
	// hooks ("poststarthook/rbac/bootstrap-roles") whose work this server
	// does too, in upstream's order: each passes once that work is done.
	// Every endpoint lists them after its own checks.
	StartChecks []HealthCheck
	// OnRequestDone, when set, is called after every API request (audit).
	OnRequestDone func(ctx context.Context, ev *RequestEvent)
	// KeepRequestObjects puts a copy of each decoded request body in its
	// RequestEvent (for the audit log); off, RequestObject stays nil.
	KeepRequestObjects bool
	// Aggregator, when set, proxies the group/versions of remote
	// APIServices and orders discovery by APIService; nil serves and lists
	// the catalogue only.
	Aggregator Aggregator
	// Observers see every successful write that is not a dry run, before
	// it returns, in order. None by default: even custom resources are
	// served only with CustomResourceSync among them.
	Observers []WriteObserver
	// WriteSteps are mutating steps of the server's own (CA injection) that
	// every create and update runs after mutating admission; see
	// runWriteSteps. None by default.
	WriteSteps []admission.NamedPlugin
	// WriteCheck, when set, may refuse any create or update (with or
	// without admission, dry run included) after mutating admission and
	// before WriteSteps, validation and validating admission: where
	// upstream's RBAC storage refuses privilege escalation. a.Object is the
	// object to be written, a.OldObject the stored one on update. Nil
	// refuses nothing.
	WriteCheck func(ctx context.Context, a *admission.Attributes) error
	// AdmissionMetrics meters WriteSteps; nil meters nothing.
	AdmissionMetrics *admission.Metrics
	// RequestMetrics are the per-request series (apiserver_request_total
	// …); nil records none.
	RequestMetrics *RequestMetrics
	// CustomTypeConverters gives the structured-merge types of custom
	// resources for managedFields and apply; nil (or a nil answer) deduces
	// them from the object.
	CustomTypeConverters TypeConverterSource
	// Extra handlers mounted on exact paths (e.g. /metrics); a key ending
	// in "/" also serves the paths one level below it.
	Extra map[string]http.Handler
	// TokenIssuer signs the tokens of serviceaccounts/token; nil uses a
	// key generated in memory.
	TokenIssuer *serviceaccount.Issuer
	// ClusterIPs allocates the cluster IPs of Services as IPAddress
	// objects; nil allocates none: a Service keeps the clusterIP it is
	// created with.
	ClusterIPs *ipallocator.Allocator
	// NodePorts allocates the node ports of NodePort and LoadBalancer
	// Services (seeded from the stored Services by Bootstrap); nil
	// allocates none.
	NodePorts *serviceip.PortAllocator
}

// TypeConverterSource gives the structured-merge type converter of a
// custom resource kind, or nil.
type TypeConverterSource interface {
	TypeConverter(gvk schema.GroupVersionKind) managedfields.TypeConverter
}

// Server is the HTTP handler of the API.
type Server struct {
	cfg    Config
	store  storage.Store
	cat    *registry.Catalogue
	chain  admission.Interface
	log    *slog.Logger
	fields *fieldManagers
	tokens *serviceaccount.Issuer
	// services follows the Services of other servers for their node ports
	// (nodeports_follow.go).
	services serviceFollow
	lifecycle
	// flow is API Priority and Fairness; inflight the plain limits used
	// when it is off (flowcontrol.go).
	flow        *flowcontrol.Controller
	inflight    *inflightLimit
	objectStats objectStats
	watchCounts watchCounts
	readPins    readPins
	// sharedEvents are recent watch events, decoded and encoded once for
	// every watcher (watch_shared.go).
	sharedEvents sharedEvents
	// items are recent list items, encoded (itemcache.go).
	items itemCache
}

// New returns a Server for cfg.
func New(cfg Config) *Server {
	if cfg.Admission == nil {
		cfg.Admission = admission.NewChain()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxRequestBodyBytes == 0 {
		cfg.MaxRequestBodyBytes = 3 * 1024 * 1024
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.MinRequestTimeout <= 0 {
		cfg.MinRequestTimeout = DefaultMinRequestTimeout
	}
	if cfg.JSONPatchMaxCopyBytes == 0 {
		cfg.JSONPatchMaxCopyBytes = defaultJSONPatchMaxCopyBytes
	}
	limitJSONPatchCopies(cfg.JSONPatchMaxCopyBytes)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BookmarkInterval == 0 {
		cfg.BookmarkInterval = time.Minute
	}
	if cfg.RevisionWait == 0 {
		cfg.RevisionWait = 3 * time.Second
	}
	if cfg.TokenIssuer == nil {
		cfg.TokenIssuer = serviceaccount.NewEphemeralIssuer()
	}
	s := &Server{cfg: cfg, store: cfg.Store, cat: cfg.Catalogue, chain: cfg.Admission, log: cfg.Logger, tokens: cfg.TokenIssuer,
		lifecycle: newLifecycle()}
	s.fields = newFieldManagers(cfg.CustomTypeConverters)
	s.flow = cfg.FlowControl
	if s.flow == nil && (cfg.MaxRequestsInflight > 0 || cfg.MaxMutatingRequestsInflight > 0) {
		s.inflight = newInflightLimit(cfg.MaxRequestsInflight, cfg.MaxMutatingRequestsInflight)
	}
	return s
}
