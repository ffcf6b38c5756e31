package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/dynamic"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/csrsigning"
	"github.com/admitd/admitd/internal/controllers/hpa"
	"github.com/admitd/admitd/internal/controllers/legacytokencleaner"
	"github.com/admitd/admitd/internal/controllers/nodelifecycle"
	"github.com/admitd/admitd/internal/controllers/podgc"
	"github.com/admitd/admitd/internal/controllers/pvbinder"
	"github.com/admitd/admitd/internal/controllers/resourceclaim"
	"github.com/admitd/admitd/internal/controllers/tainteviction"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// runner is a controller started with its client.
type runner interface{ Run(context.Context) }

// loopbackController is one of kube-controller-manager's controllers that
// admitd runs with a dynamic loopback client.
type loopbackController struct {
	name string // kube-controller-manager's --controllers name
	user authenticationv1.UserInfo
	new  func(rt http.RoundTripper, client dynamic.Interface, log *slog.Logger) (runner, error)
}

// startControllers runs the namespace, policy status, garbage collector,
// ClusterRole aggregation, service-account, root CA publisher, and PVC and
// PV protection controllers the selection turns on, until ctx ends; each
// writes through the loopback client as its own kube-controller-manager
// user, which the bootstrap RBAC policy authorizes, and through admission
// as kube-controller-manager's writes go (a webhook or policy matching
// their writes sees them, and may refuse them). caPEM is the CA the root
// CA publisher puts in every namespace. It returns the channels of the
// controllers that say when their first pass is done.
func startControllers(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caPEM []byte, sel controllers.ControllerSelection, log *slog.Logger) ([]<-chan struct{}, error) {
	var firstPasses []<-chan struct{}
	for _, c := range []loopbackController{
		{controllers.ClusterRoleAggregationControllerName, controllers.ClusterRoleAggregationUser, func(_ http.RoundTripper, cl dynamic.Interface, l *slog.Logger) (runner, error) {
			return controllers.NewClusterRoleAggregation(store, cat, cl, l), nil
		}},
		{controllers.NamespaceControllerName, controllers.NamespacesUser, func(_ http.RoundTripper, cl dynamic.Interface, l *slog.Logger) (runner, error) {
			return controllers.NewNamespaces(store, cat, cl, l), nil
		}},
		{controllers.PolicyStatusControllerName, controllers.PolicyStatusUser, func(_ http.RoundTripper, cl dynamic.Interface, l *slog.Logger) (runner, error) {
			return controllers.NewPolicyStatus(store, cat, cl, api.OpenAPI(), l), nil
		}},
		{controllers.GarbageCollectorControllerName, controllers.GarbageCollectorUser, func(rt http.RoundTripper, cl dynamic.Interface, l *slog.Logger) (runner, error) {
			recorder, err := controllers.NewEventRecorder(ctx, rt, controllers.GarbageCollectorComponent, l)
			if err != nil {
				return nil, err
			}
			return controllers.NewGarbageCollector(store, cat, cl, recorder, l), nil
		}},
		{controllers.ServiceAccountControllerName, controllers.ServiceAccountsUser, func(_ http.RoundTripper, cl dynamic.Interface, l *slog.Logger) (runner, error) {
			return controllers.NewServiceAccounts(store, cl, l), nil
		}},
		{controllers.RootCAControllerName, controllers.RootCAUser, func(_ http.RoundTripper, cl dynamic.Interface, l *slog.Logger) (runner, error) {
			return controllers.NewRootCA(store, cat, cl, caPEM, l), nil
		}},
		{controllers.PVCProtectionControllerName, controllers.PVCProtectionUser, func(_ http.RoundTripper, cl dynamic.Interface, l *slog.Logger) (runner, error) {
			return controllers.NewPVCProtection(store, cat, cl, l), nil
		}},
		{controllers.PVProtectionControllerName, controllers.PVProtectionUser, func(_ http.RoundTripper, cl dynamic.Interface, l *slog.Logger) (runner, error) {
			return controllers.NewPVProtection(store, cat, cl, l), nil
		}},
	} {
		if !sel.Enabled(c.name) {
			continue
		}
		rt := controllerLoopback(ctx, api, c.user, log)
		client, err := controllers.NewClient(rt)
		if err != nil {
			return nil, err
		}
		r, err := c.new(rt, client, log.With("controller", c.name))
		if err != nil {
			return nil, err
		}
		if fp, ok := r.(controllers.FirstPasser); ok {
			firstPasses = append(firstPasses, fp.FirstPassDone())
		}
		go r.Run(ctx)
	}
	return firstPasses, nil
}

// firstPassWait bounds how long Start waits for the controllers' first
// writes: a webhook that hangs on them must not hold the server's start.
const firstPassWait = 5 * time.Second

// waitFirstPasses waits, at most firstPassWait, until the controllers have
// tried their first writes (kube-root-ca.crt and the default
// ServiceAccount in every namespace), so that a caller of Start (a testenv
// user, a test) begins, as a client of a running cluster does, after them:
// a webhook it then registers never sees them.
func waitFirstPasses(ctx context.Context, passes []<-chan struct{}, log *slog.Logger) {
	timeout := time.NewTimer(firstPassWait)
	defer timeout.Stop()
	for _, done := range passes {
		select {
		case <-done:
		case <-ctx.Done():
			return
		case <-timeout.C:
			log.Warn("the controllers' first writes are not done; going on", "waited", firstPassWait)
			return
		}
	}
}

// admitdControllers are the names of kube-controller-manager's
// controllers admitd runs (the others are accepted in --controllers and
// not run).
var admitdControllers = []string{
	controllers.ClusterRoleAggregationControllerName, controllers.NamespaceControllerName,
	controllers.PolicyStatusControllerName, controllers.GarbageCollectorControllerName,
	controllers.ServiceAccountControllerName, controllers.RootCAControllerName,
	controllers.PVCProtectionControllerName, controllers.PVProtectionControllerName,
	controllers.ResourceQuotaControllerName, controllers.ServiceAccountTokenControllerName,
	controllers.StorageVersionMigratorControllerName, legacytokencleaner.Name,
}

// controllerSelection reads Options.Controllers (kube-controller-manager's
// --controllers; nil is "*").
func controllerSelection(o Options) (controllers.ControllerSelection, error) {
	list := o.Controllers
	if list == nil {
		list = []string{"*"}
	}
	if o.CopiedObjects {
		list = append(slices.Clone(list), "-"+controllers.GarbageCollectorControllerName, "-"+controllers.RootCAControllerName, "-"+podgc.Name,
			"-"+nodelifecycle.Name, "-"+tainteviction.Name, "-"+pvbinder.Name, "-"+hpa.Name, "-"+resourceclaim.Name,
			"-"+legacytokencleaner.Name)
	}
	return controllers.ParseControllers(list)
}

// logSelection logs the controllers the selection leaves off, and those it
// names that admitd does not have.
func logSelection(sel controllers.ControllerSelection, log *slog.Logger) {
	var off []string
	for _, name := range slices.Concat(admitdControllers, workloadControllers) {
		if !sel.Enabled(name) {
			off = append(off, name)
		}
	}
	if len(off) > 0 {
		log.Info("controllers disabled by --controllers", "controllers", off)
	}
	for _, name := range sel.Named() {
		if !slices.Contains(admitdControllers, name) && !slices.Contains(workloadControllers, name) {
			log.Info("kube-controller-manager controller not implemented by admitd, ignored", "controller", name)
		}
	}
}

// controllerPlan is what the controllers start with, read from the
// options before anything starts: a bad --controllers list or an
// unreadable signing file stops the server at start, as it stops
// kube-controller-manager, also when the controllers wait for the lease.
type controllerPlan struct {
	sel controllers.ControllerSelection
	// signerCAs are the CSR signer's CAs by signer (nil: it signs nothing).
	signerCAs map[string]csrsigning.CA
}

// planControllers reads the controller selection and the CSR signer's CAs.
func planControllers(o Options) (controllerPlan, error) {
	sel, err := controllerSelection(o)
	if err != nil {
		return controllerPlan{}, err
	}
	if err := o.LegacyTokenCleaner.check(sel); err != nil {
		return controllerPlan{}, err
	}
	plan := controllerPlan{sel: sel}
	if sel.Enabled(csrsigning.Name) {
		log := o.Logger.With("controller", csrsigning.Name)
		if plan.signerCAs, err = o.CSRSigning.signerCAs(filepath.Join(o.DataDir, "pki"), log); err != nil {
			return controllerPlan{}, fmt.Errorf("starting the CSR signer: %w", err)
		}
	}
	return plan, nil
}

// startAPIServerControllers starts the API server's own controllers (the
// APIServices' registration and availability, the kubernetes Service
// reconciler), whose first runs /readyz waits for, until ctx ends, and
// registers the simulated nodes (startControllerManager runs them).
func (s *Server) startAPIServerControllers(ctx context.Context, p *apiParts, o Options) error {
	if err := startAPIServiceRegistration(ctx, p, s.store, o.Logger); err != nil {
		return fmt.Errorf("starting the APIService registration: %w", err)
	}
	if err := startAPIServiceAvailability(ctx, p, o.Logger); err != nil {
		return fmt.Errorf("starting the APIService availability controller: %w", err)
	}
	if err := startKubernetesService(ctx, p, s.listener.Addr(), o.Logger); err != nil {
		return fmt.Errorf("starting the kubernetes service controller: %w", err)
	}
	sim, err := registerSimulatedNodes(ctx, p, s.store, o)
	if err != nil {
		return fmt.Errorf("starting the simulated nodes: %w", err)
	}
	p.simulator = sim
	return nil
}

// startControllerManager starts, as the plan says, what
// kube-controller-manager runs beside kube-apiserver (the controllers
// above, the workload controllers, quota and service-account tokens), and
// the simulated nodes, until ctx ends.
func (s *Server) startControllerManager(ctx context.Context, p *apiParts, o Options, plan controllerPlan) error {
	sel := plan.sel
	logSelection(sel, o.Logger)
	firstPasses, err := startControllers(ctx, p.api, s.store, p.cat, s.CAPEM, sel, o.Logger)
	if err != nil {
		return fmt.Errorf("starting controllers: %w", err)
	}
	// the controllers' watch caches, one of each resource, shared
	caches := controllers.NewCaches(s.store, p.cat, o.Logger.With("component", "controller-caches"))
	if err := startWorkloadControllers(ctx, p, caches, sel, o.Logger); err != nil {
		return fmt.Errorf("starting the workload controllers: %w", err)
	}
	if err := startPodGCAndCSRSigning(ctx, p, s.store, caches, o, plan); err != nil {
		return err
	}
	if err := startNodeLifecycleController(ctx, p, caches, o.NodeLifecycle, sel, o.Logger); err != nil {
		return fmt.Errorf("starting the node lifecycle controller: %w", err)
	}
	if err := startTaintEvictionController(ctx, p, caches, sel, o.Logger); err != nil {
		return fmt.Errorf("starting the taint eviction controller: %w", err)
	}
	if err := startLegacyTokenCleaner(ctx, p, caches, o.LegacyTokenCleaner, sel, o.Logger); err != nil {
		return fmt.Errorf("starting the legacy service account token cleaner: %w", err)
	}
	if sel.Enabled(controllers.ResourceQuotaControllerName) {
		if err := startQuotaController(ctx, p, s.store, o); err != nil {
			return fmt.Errorf("starting the quota controller: %w", err)
		}
	}
	if err := startStorageVersionMigrator(ctx, p, s.store, o, sel); err != nil {
		return fmt.Errorf("starting the storage version migrator: %w", err)
	}
	if sel.Enabled(controllers.ServiceAccountTokenControllerName) {
		if err := s.startTokens(ctx, p, o.Logger); err != nil {
			return fmt.Errorf("starting the token controller: %w", err)
		}
	}
	if p.simulator != nil {
		if err := p.simulator.ShareCaches(caches); err != nil {
			return fmt.Errorf("starting the simulated nodes: %w", err)
		}
		go p.simulator.Run(ctx)
	}
	// every reader is made: the caches start (the controllers wait for
	// them to sync)
	caches.Start(ctx)
	waitFirstPasses(ctx, firstPasses, o.Logger)
	return nil
}
