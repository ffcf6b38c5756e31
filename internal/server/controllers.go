package server

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// startControllers runs the namespace, policy status, garbage collector,
// ClusterRole aggregation, service-account, root CA publisher, and PVC and
// PV protection controllers until ctx ends; each writes through the loopback client as
// its own kube-controller-manager user, which the bootstrap RBAC policy
// authorizes (the service-account and root CA controllers without
// admission: see LoopbackWithoutAdmission). caPEM is the CA the root CA
// publisher puts in every namespace.
func startControllers(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caPEM []byte, copiedObjects bool, log *slog.Logger) error {
	gcClient, err := controllers.NewClient(api.Loopback(controllers.GarbageCollectorUser))
	if err != nil {
		return err
	}
	saClient, err := controllers.NewClient(api.LoopbackWithoutAdmission(controllers.ServiceAccountsUser))
	if err != nil {
		return err
	}
	rootCAClient, err := controllers.NewClient(api.LoopbackWithoutAdmission(controllers.RootCAUser))
	if err != nil {
		return err
	}
	nsClient, err := controllers.NewClient(api.Loopback(controllers.NamespacesUser))
	if err != nil {
		return err
	}
	statusClient, err := controllers.NewClient(api.Loopback(controllers.PolicyStatusUser))
	if err != nil {
		return err
	}
	aggClient, err := controllers.NewClient(api.Loopback(controllers.ClusterRoleAggregationUser))
	if err != nil {
		return err
	}
	pvcClient, err := controllers.NewClient(api.Loopback(controllers.PVCProtectionUser))
	if err != nil {
		return err
	}
	pvClient, err := controllers.NewClient(api.Loopback(controllers.PVProtectionUser))
	if err != nil {
		return err
	}
	go controllers.NewClusterRoleAggregation(store, cat, aggClient, log.With("controller", "clusterrole-aggregation")).Run(ctx)
	go controllers.NewNamespaces(store, cat, nsClient, log.With("controller", "namespace")).Run(ctx)
	go controllers.NewPolicyStatus(store, cat, statusClient, api.OpenAPI(), log.With("controller", "validatingadmissionpolicy-status")).Run(ctx)
	if !copiedObjects {
		go controllers.NewGarbageCollector(store, cat, gcClient, log.With("controller", "garbagecollector")).Run(ctx)
		go controllers.NewRootCA(store, cat, rootCAClient, caPEM, log.With("controller", "root-ca-cert-publisher")).Run(ctx)
	}
	go controllers.NewServiceAccounts(store, saClient, log.With("controller", "serviceaccount")).Run(ctx)
	go controllers.NewPVCProtection(store, cat, pvcClient, log.With("controller", "pvc-protection")).Run(ctx)
	go controllers.NewPVProtection(store, cat, pvClient, log.With("controller", "pv-protection")).Run(ctx)
	return nil
}

// startAllControllers starts what kube-controller-manager runs beside
// kube-apiserver (the controllers above, quota, storage version migrations
// and service-account tokens),
// the APIServices' registration and availability controllers and the
// kubernetes Service reconciler, until ctx ends.
func (s *Server) startAllControllers(ctx context.Context, p *apiParts, o Options) error {
	if err := startControllers(ctx, p.api, s.store, p.cat, s.CAPEM, o.CopiedObjects, o.Logger); err != nil {
		return fmt.Errorf("starting controllers: %w", err)
	}
	if err := startQuotaController(ctx, p, s.store, o); err != nil {
		return fmt.Errorf("starting the quota controller: %w", err)
	}
	if err := startStorageVersionMigrator(ctx, p, s.store, o); err != nil {
		return fmt.Errorf("starting the storage version migrator: %w", err)
	}
	if err := startAPIServiceRegistration(ctx, p, s.store, o.Logger); err != nil {
		return fmt.Errorf("starting the APIService registration: %w", err)
	}
	if err := startAPIServiceAvailability(ctx, p, o.Logger); err != nil {
		return fmt.Errorf("starting the APIService availability controller: %w", err)
	}
	if err := startKubernetesService(ctx, p, s.listener.Addr(), o.Logger); err != nil {
		return fmt.Errorf("starting the kubernetes service controller: %w", err)
	}
	if err := s.startTokens(ctx, p, o.Logger); err != nil {
		return fmt.Errorf("starting the token controller: %w", err)
	}
	if err := startSimulatedNodes(ctx, p, s.store, o); err != nil {
		return fmt.Errorf("starting the simulated nodes: %w", err)
	}
	return nil
}
