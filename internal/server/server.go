// Package server assembles a running admitd API server from options:
// storage, certificates, authentication, the admission chain and the HTTPS
// listener. The CLI and the in-process test environment both start servers
// through it.
package server

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/aggregator"
	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/rbac"
	"github.com/admitd/admitd/internal/backgroundaudit"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/ephemeral"
	"github.com/admitd/admitd/internal/controllers/hpa"
	"github.com/admitd/admitd/internal/controllers/nodelifecycle"
	"github.com/admitd/admitd/internal/controllers/pvbinder"
	"github.com/admitd/admitd/internal/controllers/resourceclaim"
	"github.com/admitd/admitd/internal/controllers/tainteviction"
	"github.com/admitd/admitd/internal/conversion"
	"github.com/admitd/admitd/internal/ipallocator"
	"github.com/admitd/admitd/internal/nodesim"
	"github.com/admitd/admitd/internal/openapi"
	"github.com/admitd/admitd/internal/pki"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/serviceaccount"
	"github.com/admitd/admitd/internal/serviceip"
	"github.com/admitd/admitd/internal/storage/bolt"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// Options configure a server. The zero value is not usable: start from
// DefaultOptions.
type Options struct {
	// BindAddress is the listen IP; default 127.0.0.1.
	BindAddress string
	// SecurePort is the HTTPS port; 0 picks a free one. Default 6443.
	SecurePort int
	// DataDir holds the embedded store and generated certificates.
	// Default ./admitd-data.
	DataDir string
	// Storage is "bolt" (default, in DataDir) or "memory".
	Storage string
	// Etcd, when it has servers, stores everything in etcd instead.
	Etcd EtcdOptions
	// TLSCertFile and TLSPrivateKeyFile serve a given certificate instead
	// of a generated one.
	TLSCertFile       string
	TLSPrivateKeyFile string
	// ClientCAFile enables x509 client-certificate authentication with
	// this CA (the generated CA is always trusted too).
	ClientCAFile string
	// TokenAuthFile is a kube-apiserver CSV token file.
	TokenAuthFile string
	// AnonymousAuth lets requests without credentials in as
	// system:anonymous (group system:unauthenticated), who may do what
	// the authorizers grant them. Default false.
	AnonymousAuth bool
	// AuthorizationModes is kube-apiserver's --authorization-mode: the
	// authorizers asked in order, the first to allow or deny deciding.
	// AlwaysAllow, AlwaysDeny, Node, RBAC and Webhook (configured by
	// AuthorizationWebhook) are served; ABAC refuses to start (not
	// implemented yet). Members of system:masters are
	// always allowed, as upstream. Default Node,RBAC, the setup
	// kube-apiserver recommends (its own default is AlwaysAllow).
	AuthorizationModes []string
	// AuthorizationWebhook configures the Webhook mode (authzwebhook.go).
	AuthorizationWebhook AuthorizationWebhookOptions
	// AuthorizationConfigFile is kube-apiserver's --authorization-config,
	// an AuthorizationConfiguration file reloaded when it changes; when
	// set, AuthorizationModes and AuthorizationWebhook are ignored (the CLI
	// refuses them together, as upstream).
	AuthorizationConfigFile string
	// KubeconfigOut is where the admin kubeconfig is written; default
	// <DataDir>/admin.kubeconfig. "-" disables writing it.
	KubeconfigOut string
	// EnableAdmissionPlugins and DisableAdmissionPlugins adjust the
	// default plugin set, as kube-apiserver's flags of the same names.
	EnableAdmissionPlugins  []string
	DisableAdmissionPlugins []string
	// AdmissionControl is the deprecated --admission-control: when not empty,
	// exactly these plugins run, and EnableAdmissionPlugins and
	// DisableAdmissionPlugins must be empty.
	AdmissionControl []string
	// AllowPrivileged is --allow-privileged: whether pods (and pod
	// templates) may have privileged containers. Default false, as
	// kube-apiserver (kubeadm and envtest set it).
	AllowPrivileged bool
	// FeatureGates is --feature-gates ("A=true,B=false"); gates not named
	// keep kube-apiserver 1.37's defaults.
	FeatureGates string
	// RuntimeConfig are --runtime-config's pairs (registry.ParseRuntimeConfigMap):
	// which built-in group versions and resources are served beyond or
	// instead of kube-apiserver 1.37's defaults.
	RuntimeConfig map[string]string
	// AdmissionControlConfigFile is an apiserver.config.k8s.io/v1
	// AdmissionConfiguration with per-plugin configuration.
	AdmissionControlConfigFile string
	// DefaultNotReadyTolerationSeconds and
	// DefaultUnreachableTolerationSeconds are DefaultTolerationSeconds'
	// flags; nil: 300.
	DefaultNotReadyTolerationSeconds    *int64
	DefaultUnreachableTolerationSeconds *int64
	// AuditLogPath enables the audit log (audit.k8s.io/v1 Event JSON lines);
	// AuditPolicyFile is its audit.k8s.io/v1 Policy (no policy: nothing is
	// logged, as upstream).
	AuditLogPath    string
	AuditPolicyFile string
	// CompactionInterval is how often the store's history is compacted,
	// keeping at least one interval of it (kube-apiserver's
	// --etcd-compaction-interval). Default 5m; 0 disables compaction.
	CompactionInterval time.Duration
	// CopiedObjects is for a server that holds objects copied from a
	// cluster (admitd audit): the garbage collector, which would delete
	// those whose owners were not copied, the root CA publisher, which
	// would rewrite their kube-root-ca.crt ConfigMaps, the pod garbage
	// collector, the node lifecycle and taint eviction controllers,
	// which would take the copied nodes, whose kubelets report elsewhere,
	// for unreachable, and the persistent volume binder, which would bind,
	// release, fail or mark Lost the copied volumes and claims (a claim
	// whose volume was not copied is Lost), and the horizontal pod
	// autoscaler, which would rescale the copied workloads to their
	// autoscalers' bounds and rewrite the autoscalers' status (their
	// metrics are the cluster's, not served here), and the resource claim
	// controller, which would drop the claims' reservations of pods not
	// copied, delete the copied claims of finished pods and make claims
	// for copied pods whose own were not copied, and the legacy service
	// account token cleaner, which would label and delete copied tokens
	// by the copied tracking ConfigMap's date, stay off.
	CopiedObjects bool
	// ServiceMap is a JSON file mapping "<svc>.<ns>.svc" to the host:port
	// to dial for webhooks behind that Service; re-read when it changes.
	ServiceMap string
	// ServiceClusterIPRange is the CIDR of the default ServiceCIDR, which
	// Service cluster IPs are allocated from as IPAddress objects; its
	// first address is the "kubernetes" Service's (kube-apiserver's
	// --service-cluster-ip-range). Default 10.0.0.0/24.
	ServiceClusterIPRange string
	// ServiceNodePortRange is the range node ports are allocated from
	// (kube-apiserver's --service-node-port-range). Default 30000-32767.
	ServiceNodePortRange string
	// ServiceAccounts configure service-account tokens (see satoken.go).
	ServiceAccounts ServiceAccountOptions
	// Quota configures the resource quota controller (see quota.go).
	Quota QuotaOptions
	// PodGC and CSRSigning configure the pod garbage collector and the
	// CSR signer (workloads_podgc.go, workloads_csrsigning.go).
	PodGC      PodGCOptions
	CSRSigning CSRSigningOptions
	// NodeLifecycle configures the node lifecycle controller
	// (workloads_nodelifecycle.go).
	NodeLifecycle NodeLifecycleOptions
	// LegacyTokenCleaner configures the legacy service account token
	// cleaner (workloads_legacytokencleaner.go).
	LegacyTokenCleaner LegacyTokenCleanerOptions
	// Controllers is kube-controller-manager's --controllers: which of its
	// controllers run ("*" those on by default, "foo" foo, "-foo" not foo;
	// its names and aliases, see controllers.ParseControllers). Nil means
	// "*"; an empty list runs none of them, as kube-controller-manager
	// with --controllers="" (a kube-apiserver alone).
	Controllers []string
	// LeaderElection elects the one instance that runs the controllers
	// when several share an etcd (see leaderelect.go).
	LeaderElection LeaderElectionOptions
	// SimulatedNodes are kwok-like nodes in the server (see nodesim.go).
	SimulatedNodes SimulatedNodesOptions
	// Logger defaults to a text logger on stderr.
	Logger *slog.Logger
	// logLevel is the default Logger's level, set through /debug/flags/v;
	// nil for a Logger given.
	logLevel *slog.LevelVar
	// Serving are the connection and request-lifetime flags.
	Serving ServingOptions
	// Aggregation are the front-proxy and aggregation-layer flags (see
	// aggregation.go).
	Aggregation AggregationOptions
	// AdmissionTraceBuffer is how many admission traces are kept for
	// /admission/traces; 0 means trace.DefaultRingSize (300), negative
	// keeps none.
	AdmissionTraceBuffer int
	// AdmissionTraceBytes is the most memory those traces hold between
	// them (trace.Entry.Bytes: mostly the object JSON of mutating steps);
	// 0 means trace.DefaultRingBytes (64 MiB).
	AdmissionTraceBytes int64
	// BackgroundAudit evaluates the Audit bindings of admission policies
	// against the stored objects (off by default; see backgroundaudit.go).
	BackgroundAudit BackgroundAuditOptions
	// onBootstrapFieldSet, when set (by a test), has the field sets of the
	// objects the server writes itself computed live and reported
	// (concurrently), to regenerate bootstrapfieldsets_gen.go.
	onBootstrapFieldSet func(key, fieldSet string)
}

// DefaultOptions returns the options `admitd serve` starts from.
func DefaultOptions() Options {
	return Options{BindAddress: "127.0.0.1", SecurePort: 6443, DataDir: "admitd-data", Storage: "bolt",
		CompactionInterval: DefaultCompactionInterval, AuthorizationModes: []string{auth.ModeNode, auth.ModeRBAC},
		AuthorizationWebhook: DefaultAuthorizationWebhookOptions(), LeaderElection: DefaultLeaderElectionOptions(),
		Etcd: EtcdOptions{CountMetricPollPeriod: DefaultObjectCountPollPeriod}}
}

// Server is a started admitd.
type Server struct {
	// URL is the https address clients use.
	URL string
	// KubeconfigPath is the admin kubeconfig, if one was written.
	KubeconfigPath string
	// CAPEM is the CA bundle clients should trust.
	CAPEM []byte
	// AdminCertPEM / AdminKeyPEM authenticate as system:masters.
	AdminCertPEM, AdminKeyPEM []byte

	api                *apiserver.Server
	http               *http.Server
	listener           net.Listener
	store              storage.Store
	cancel             context.CancelFunc
	done               chan struct{}
	compactionInterval time.Duration
	// elected is closed once the controllers' lease is released.
	elected <-chan struct{}
	// stopIdentityLease deletes the identity lease on a graceful shutdown.
	stopIdentityLease func()
	// closeAudit flushes and closes the audit log.
	closeAudit func() error
	// admission is the chain of enabled plugins.
	admission *admission.Chain
	serving   ServingOptions
	log       *slog.Logger
	closeOnce sync.Once
	closeErr  error
}

// AdmissionPlugins returns the names of the admission plugins that run, in
// order.
func (s *Server) AdmissionPlugins() []string {
	var out []string
	for _, p := range s.admission.Plugins() {
		out = append(out, p.Name)
	}
	return out
}

// Start opens storage, prepares certificates and starts serving. The server
// runs until Close or until ctx ends.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.Logger == nil {
		o.logLevel = new(slog.LevelVar)
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: o.logLevel}))
	}
	if err := validateAuthorization(o); err != nil {
		return nil, err
	}
	if _, err := controllerSelection(o); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	store, probe, err := openStore(o)
	if err != nil {
		return nil, err
	}
	s, err := start(ctx, o, store, probe)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	return s, nil
}

// boltPath is the embedded store's file.
func boltPath(o Options) string { return filepath.Join(o.DataDir, "admitd.db") }

// openStore opens the store the options name, with its health probe (nil
// for the memory store).
func openStore(o Options) (storage.Store, storageProbe, error) {
	if len(o.Etcd.Servers) > 0 {
		return openEtcd(o)
	}
	// The embedded stores get etcd's default request bound, the object
	// size ceiling kube-apiserver relies on.
	switch o.Storage {
	case "", "bolt":
		s, err := bolt.Open(boltPath(o), bolt.Options{})
		if err != nil {
			return nil, nil, err
		}
		return storage.WithSizeLimit(s, storage.DefaultMaxRequestBytes), probeOf(s), nil
	case "memory":
		return storage.WithSizeLimit(memory.New(), storage.DefaultMaxRequestBytes), nil, nil
	}
	return nil, nil, fmt.Errorf("unknown storage %q (want bolt or memory)", o.Storage)
}

func start(ctx context.Context, o Options, store storage.Store, probe storageProbe) (*Server, error) {
	bundle, err := pki.EnsureServingBundle(filepath.Join(o.DataDir, "pki"), []string{"localhost", "127.0.0.1", o.BindAddress})
	if err != nil {
		return nil, fmt.Errorf("preparing certificates: %w", err)
	}
	tlsCfg, err := servingTLS(o, bundle)
	if err != nil {
		return nil, err
	}
	// life ends with the server: background work (caches, controllers,
	// manifest watches of the admission plugins) stops with it.
	life, stop := context.WithCancel(ctx)
	parts, err := newAPI(life, o, store, probe, bundle)
	if err != nil {
		stop()
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	if err != nil {
		stop()
		_ = parts.closeAudit()
		return nil, fmt.Errorf("listening: %w", err)
	}
	s := &Server{api: parts.api, listener: ln, store: store, done: make(chan struct{}), closeAudit: parts.closeAudit,
		cancel: stop, compactionInterval: o.CompactionInterval, admission: parts.adm.chain, serving: o.Serving, log: o.Logger,
		CAPEM: bundle.CA.CertPEM, AdminCertPEM: bundle.AdminCertPEM, AdminKeyPEM: bundle.AdminKeyPEM}
	s.URL = "https://" + ln.Addr().String()
	addr := ln.Addr().String()
	parts.self.Store(&addr)
	parts.openid.listening(ln.Addr().String())
	if err := s.writeKubeconfig(o); err != nil {
		stop()
		ln.Close()
		_ = parts.closeAudit()
		return nil, err
	}
	s.http = newHTTPServer(parts.api, tlsCfg, o.Serving, o.Logger, parts.tlsHandshakeErrors)
	if err := s.run(life, parts, tlsCfg, o); err != nil {
		stop()
		ln.Close()
		_ = parts.closeAudit()
		return nil, err
	}
	return s, nil
}

// apiParts is the API server with what runs beside it.
type apiParts struct {
	api        *apiserver.Server
	cat        *registry.Catalogue
	adm        *admissionParts
	rbac       *rbacPolicy
	nodes      *nodeGraph // nil without the Node mode
	closeAudit func() error
	sa         *saTokens
	openid     *openID
	clusterIPs *clusterIPParts
	crds       *apiserver.CustomResources
	flow       *flowControl // nil when APF is off
	// requestMetrics are the per-request series; their in-flight sample
	// runs with the server.
	requestMetrics *apiserver.RequestMetrics
	// objectCounts are apiserver_resource_objects, counted with the
	// server.
	objectCounts *objectCounts
	// tlsHandshakeErrors counts what the HTTPS server fails to shake hands
	// with.
	tlsHandshakeErrors prometheus.Counter
	// metrics is the registry served on /metrics, for the series of what
	// starts later (kube-controller-manager's controllers).
	metrics prometheus.Registerer
	// ephemeralMetrics count the ephemeral volume controller's creates,
	// served once it starts (and kept when it starts again under leader
	// election).
	ephemeralMetrics *ephemeral.Metrics
	// nodeLifecycleMetrics are the node lifecycle controller's
	// node_collector series, kept as ephemeralMetrics.
	nodeLifecycleMetrics *nodelifecycle.Metrics
	taintEvictionMetrics *tainteviction.Metrics
	// pvBinderMetrics are the persistent volume binder's pv_collector
	// and retroactive_storageclass series, kept as ephemeralMetrics.
	pvBinderMetrics *pvbinder.Metrics
	// hpaMetrics are the horizontal pod autoscaler's
	// horizontal_pod_autoscaler_controller series, kept as
	// ephemeralMetrics.
	hpaMetrics *hpa.Metrics
	store      storage.Store
	aggregator *aggregator.Aggregator
	frontProxy *frontProxy
	// resourceClaimMetrics are the resource claim controller's
	// dynamic_resource_allocation series, kept as ephemeralMetrics.
	resourceClaimMetrics *resourceclaim.Metrics
	// clientCA is the PEM bundle x509 client certificates are verified
	// with (published for extension servers).
	clientCA []byte
	// self is the address the server listens on, once it does.
	self *atomic.Pointer[string]
	// backgroundAudit is nil unless --background-audit.
	backgroundAudit *backgroundaudit.Scanner
	// simulator runs the simulated nodes (nil unless --simulated-nodes);
	// set by startAPIServerControllers, run by startControllerManager.
	simulator *nodesim.Simulator
}

// newAPI builds the API server: catalogue, admission chain and its sources,
// the CA injection write step, the write observers, audit,
// service-account tokens, /metrics; then bootstraps storage and loads the
// admission configuration.
func newAPI(ctx context.Context, o Options, store storage.Store, probe storageProbe, bundle pki.Bundle) (*apiParts, error) {
	apis, err := registry.NewAPIEnablement(o.RuntimeConfig,
		registry.RuntimeConfigOptions{PriorityAndFairness: !o.Serving.DisablePriorityAndFairness})
	if err != nil {
		return nil, err
	}
	if err := needCoreResources(apis); err != nil {
		return nil, err
	}
	cat := registry.NewCatalogueOf(apis)
	if unserved := registry.Unserved(apis, cat); len(unserved) > 0 {
		o.Logger.Warn("--runtime-config turns on resources admitd does not serve", "resources", unserved)
	}
	cat.SetAllowPrivileged(o.AllowPrivileged)
	metricsReg := newMetricsRegistry()
	policy := newRBACPolicy(store, cat)
	authz, nodes, err := newServerAuthorizer(ctx, o, store, cat, policy, metricsReg)
	if err != nil {
		return nil, err
	}
	sa, err := newSATokens(o)
	if err != nil {
		return nil, err
	}
	saAuth := sa.authenticators(serviceaccount.NewGetter(admissionsource.NewObjectLookup(store, cat).GetObject))
	fp, err := newFrontProxy(o)
	if err != nil {
		return nil, err
	}
	clientCA, err := clientCABundle(o, bundle)
	if err != nil {
		return nil, err
	}
	authnMetrics := auth.NewAuthenticationMetrics(metricsReg)
	authn, err := newAuthenticator(o, clientCA, fp.requestHeader, authz, saAuth, authnMetrics)
	if err != nil {
		return nil, err
	}
	parts := &apiParts{}
	adm, err := newAdmission(ctx, o, store, cat, metricsReg, authz, parts.loopback(apiserverUser))
	if err != nil {
		return nil, err
	}
	cat.SetConverterFactory(conversion.NewFactory(newServiceResolver(o.ServiceMap, adm.sources.Services()), conversion.NewMetrics(metricsReg)).ConverterFor)
	clusterIPs, err := newClusterIPs(o, store, cat, adm.sources, ipallocator.NewMetrics(metricsReg))
	if err != nil {
		return nil, err
	}
	nodePorts, err := serviceip.NewPorts(cmp.Or(o.ServiceNodePortRange, serviceip.DefaultNodePortRange))
	if err != nil {
		return nil, err
	}
	metricsReg.MustRegister(nodePorts)
	tokens := sa.issuer
	reviewer, err := tokenReviewer(o, tokens)
	if err != nil {
		return nil, err
	}
	auditor, closeAudit, err := newAuditor(o, newAuditEvents(metricsReg))
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	requestMetrics := apiserver.NewRequestMetrics(metricsReg)
	cfg := apiserver.Config{
		BootstrapFieldSets: bootstrapFieldSets(), OnBootstrapFieldSet: o.onBootstrapFieldSet,
		Store: store, Catalogue: cat, Logger: o.Logger, Authenticate: authn, Authorizer: authz, Admission: adm.chain, TokenIssuer: tokens,
		WriteCheck:           rbacWriteCheck(rbac.WriteCheck{Authorizer: authz, Policy: policy.authorizer}),
		CustomTypeConverters: adm.types, AdmissionMetrics: adm.metrics, GracefulPodDeletion: o.SimulatedNodes.Enabled,
		RequestTimeout: o.Serving.RequestTimeout, MinRequestTimeout: o.Serving.MinRequestTimeout, GoawayChance: o.Serving.GoawayChance,
		Extra:          map[string]http.Handler{"/metrics": promhttp.HandlerFor(metricsReg, promhttp.HandlerOpts{})},
		RequestMetrics: requestMetrics, AuthenticationMetrics: authnMetrics, AuthorizationAttempts: auth.NewAuthorizationAttempts(metricsReg),
	}
	cfg.TokenAuthenticator = reviewer
	cfg.Ready = adm.sources.Synced
	cfg.StorageHealth = newStorageCheck(probe, o.Etcd.HealthcheckTimeout)
	cfg.StorageReadiness = newStorageCheck(probe, o.Etcd.ReadycheckTimeout)
	cfg.ClusterIPs, cfg.NodePorts = clusterIPs.alloc, nodePorts
	cfg.ServiceAccountAuthenticators = saAuth
	openid, routes := openIDRoutes(sa, o.Logger)
	maps.Copy(cfg.Extra, routes)
	if auditor != nil {
		cfg.OnRequestDone = auditRequestDone(auditor, func(err error) { o.Logger.Error("writing audit event", "err", err) })
		cfg.KeepRequestObjects = true
	}
	cfg.OnWatcherTerminated = apiserver.TerminatedWatchers(metricsReg)
	if !o.Serving.DisableProfiling {
		cfg.Extra["/debug/pprof/"] = http.HandlerFunc(pprof.Index)
		for name, h := range map[string]http.HandlerFunc{"cmdline": pprof.Cmdline, "profile": pprof.Profile, "symbol": pprof.Symbol, "trace": pprof.Trace} {
			cfg.Extra["/debug/pprof/"+name] = h
		}
		maps.Copy(cfg.Extra, debugFlagRoutes(o.logLevel))
	}
	self := &atomic.Pointer[string]{}
	agg := newAggregator(o, store, adm, cat, fp, self)
	cfg.Aggregator = agg
	flow := newFlowControl(o.Serving, store, cat, requestMetrics)
	flow.configure(&cfg, o.Serving)
	cfg.StartChecks = startChecks(flow != nil, adm.gates.Enabled("APIServerIdentity"), clusterIPs, controllers.NewAutoRegisterCompletion(store, cat).Check)
	if flow != nil {
		flow.ctl.Register(metricsReg)
		maps.Copy(cfg.Extra, flow.ctl.DebugHandlers())
	}
	scanner, err := newBackgroundAudit(o, store, cat, adm, admissionAuthorizer(authz), parts)
	if err != nil {
		_ = closeAudit()
		return nil, fmt.Errorf("background audit: %w", err)
	}
	mountDashboard(ctx, &cfg, o, parts, scanner)
	*parts = apiParts{cat: cat, backgroundAudit: scanner, adm: adm, rbac: policy, nodes: nodes, closeAudit: closeAudit, sa: sa, openid: openid, clusterIPs: clusterIPs, flow: flow,
		store: store, aggregator: agg, frontProxy: fp, clientCA: clientCA, self: self, requestMetrics: requestMetrics,
		objectCounts: newObjectCounts(metricsReg, store, cat), tlsHandshakeErrors: newTLSHandshakeErrors(metricsReg), metrics: metricsReg,
		ephemeralMetrics: ephemeral.NewMetrics(), nodeLifecycleMetrics: nodelifecycle.NewMetrics(),
		taintEvictionMetrics: tainteviction.NewMetrics(), pvBinderMetrics: pvbinder.NewMetrics(), hpaMetrics: hpa.NewMetrics(),
		resourceClaimMetrics: resourceclaim.NewMetrics()}
	metricsReg.MustRegister(newStorageSize(o, store), apiServiceAvailability{store: store, cat: cat})
	inject := controllers.NewCAInjection(adm.sources.Secrets(), o.Logger)
	cfg.WriteSteps = []admission.NamedPlugin{{Name: controllers.CAInjectionName, Plugin: inject}}
	parts.crds = apiserver.NewCustomResources(store, cat, o.Logger)
	if cfg.Observers, err = writeObservers(store, cat, parts.crds, adm, policy, parts.loopback(controllers.CAInjectorUser), inject, o.Logger); err != nil {
		_ = closeAudit()
		return nil, err
	}
	if nodes != nil {
		cfg.Observers = append(cfg.Observers, nodes.observer())
	}
	if flow != nil {
		cfg.Observers = append(cfg.Observers, reloading(flow.cache, "reloading the flow-control configuration", o.Logger))
	}
	parts.api = apiserver.New(cfg)
	cat.SetPolicySchemas(openapi.PolicySchemas{Service: parts.api.OpenAPI(), Catalogue: cat})
	if err := sa.tracker.bind(parts.api); err != nil {
		_ = closeAudit()
		return nil, err
	}
	if err := parts.load(ctx, o.Logger.With("component", "admission-sources")); err != nil {
		_ = closeAudit()
		return nil, err
	}
	return parts, nil
}

// load bootstraps storage, starts the admission sources (until ctx ends)
// and reads the admission configuration.
func (p *apiParts) load(ctx context.Context, sourcesLog *slog.Logger) error {
	if err := p.api.Bootstrap(ctx); err != nil {
		return fmt.Errorf("bootstrapping: %w", err)
	}
	if err := ensureBootstrapPolicy(ctx, p.api); err != nil {
		return err
	}
	if err := ensureSystemPriorityClasses(ctx, p.api); err != nil {
		return err
	}
	if p.flow != nil {
		if err := ensureFlowControlBootstrap(ctx, p.api, p.cat); err != nil {
			return err
		}
		if err := p.flow.cache.Reload(ctx); err != nil {
			return fmt.Errorf("loading the flow-control configuration: %w", err)
		}
	}
	if err := p.rbac.cache.Reload(ctx); err != nil {
		return fmt.Errorf("loading RBAC policy: %w", err)
	}
	if p.nodes != nil {
		if err := p.nodes.list(ctx); err != nil {
			return fmt.Errorf("loading the node graph: %w", err)
		}
	}
	p.adm.sources.Start(ctx, sourcesLog)
	if err := p.adm.webhooks.Reload(ctx); err != nil {
		return fmt.Errorf("loading webhook configurations: %w", err)
	}
	if err := p.adm.policies.Reload(ctx); err != nil {
		return fmt.Errorf("loading admission policies: %w", err)
	}
	return p.clusterIPs.start(ctx, p.api, sourcesLog)
}

// run starts serving and the background work, until runCtx ends (Close
// cancels it); on error the caller cancels it. kube-controller-manager's
// controllers start last, once the server serves (see
// startElectedControllers).
func (s *Server) run(runCtx context.Context, p *apiParts, tlsCfg *tls.Config, o Options) error {
	log := o.Logger
	plan, err := planControllers(o)
	if err != nil {
		return err
	}
	elected, startManager, err := startElectedControllers(runCtx, o, p,
		func(ctx context.Context) error { return s.startAPIServerControllers(ctx, p, o) },
		func(ctx context.Context) error { return s.startControllerManager(ctx, p, o, plan) })
	if err != nil {
		return err
	}
	s.elected = elected
	if o := s.compactionInterval; o > 0 {
		go runCompactor(runCtx, s.store, o, log.With("component", "compactor"), p.api.OldestReadRevision)
	}
	go p.crds.Run(runCtx)
	if err := startAuthenticationTrust(runCtx, p, log); err != nil {
		return err
	}
	if s.stopIdentityLease, err = startIdentityControllers(runCtx, p, s.listener.Addr(), o, log); err != nil {
		return err
	}
	if len(o.Etcd.Servers) > 0 { // other servers may share the store
		go p.api.FollowNodePorts(runCtx)
	}
	go p.clusterIPs.run(runCtx, log)
	go p.requestMetrics.SampleInflight(runCtx)
	go p.objectCounts.run(runCtx, o.Etcd.CountMetricPollPeriod)
	go p.adm.webhooks.Run(runCtx)
	go p.rbac.cache.Run(runCtx)
	if p.flow != nil {
		go p.flow.run(runCtx, p.api, log.With("component", "flowcontrol"))
	}
	if p.nodes != nil {
		p.nodes.run(runCtx)
	}
	go p.adm.policies.Run(runCtx)
	if p.backgroundAudit != nil {
		go p.backgroundAudit.Run(runCtx)
	}
	go func() {
		defer close(s.done)
		err := s.http.Serve(tls.NewListener(s.listener, tlsCfg))
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serving", "err", err)
		}
	}()
	go func() {
		<-runCtx.Done()
		_ = s.http.Close()
	}()
	if err := startManager(); err != nil {
		_ = s.http.Close()
		<-s.done
		return err
	}
	return nil
}

func (s *Server) writeKubeconfig(o Options) error {
	path := o.KubeconfigOut
	if path == "-" {
		return nil
	}
	if path == "" {
		path = filepath.Join(o.DataDir, "admin.kubeconfig")
	}
	if err := pki.WriteKubeconfig(path, s.URL, s.CAPEM, s.AdminCertPEM, s.AdminKeyPEM); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	s.KubeconfigPath = abs
	return nil
}

func servingTLS(o Options, bundle pki.Bundle) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	if o.TLSCertFile != "" || o.TLSPrivateKeyFile != "" {
		cert, err = tls.LoadX509KeyPair(o.TLSCertFile, o.TLSPrivateKeyFile)
	} else {
		cert, err = bundle.ServingCertificate()
	}
	if err != nil {
		return nil, fmt.Errorf("loading serving certificate: %w", err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequestClientCert,
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"h2", "http/1.1"},
	}, nil
}

// Close stops serving at once and closes storage; only the first call
// does anything (after Shutdown, it is done).
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		<-s.done
		if s.elected != nil {
			<-s.elected
		}
		s.closeErr = errors.Join(s.closeAudit(), s.store.Close())
	})
	return s.closeErr
}

// Done is closed when the server has stopped serving.
func (s *Server) Done() <-chan struct{} { return s.done }
