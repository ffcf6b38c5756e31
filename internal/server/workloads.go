package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/csrapproving"
	"github.com/admitd/admitd/internal/controllers/csrcleaner"
	"github.com/admitd/admitd/internal/controllers/csrsigning"
	"github.com/admitd/admitd/internal/controllers/daemonset"
	"github.com/admitd/admitd/internal/controllers/deployment"
	"github.com/admitd/admitd/internal/controllers/disruption"
	"github.com/admitd/admitd/internal/controllers/endpointslicemirroring"
	"github.com/admitd/admitd/internal/controllers/ephemeral"
	"github.com/admitd/admitd/internal/controllers/hpa"
	"github.com/admitd/admitd/internal/controllers/job"
	"github.com/admitd/admitd/internal/controllers/nodelifecycle"
	"github.com/admitd/admitd/internal/controllers/podgc"
	"github.com/admitd/admitd/internal/controllers/pvbinder"
	"github.com/admitd/admitd/internal/controllers/replicaset"
	"github.com/admitd/admitd/internal/controllers/resourceclaim"
	"github.com/admitd/admitd/internal/controllers/servicecidrs"
	"github.com/admitd/admitd/internal/controllers/tainteviction"
	"github.com/admitd/admitd/internal/controllers/ttl"
	"github.com/admitd/admitd/internal/controllers/ttlafterfinished"
	"github.com/admitd/admitd/internal/controllers/vacprotection"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// workloadControllers are the names of the workload controllers admitd
// runs (internal/controllers/<workload>).
var workloadControllers = []string{controllers.ReplicaSetControllerName, controllers.ReplicationControllerControllerName,
	controllers.DeploymentControllerName, daemonset.Name, job.Name, ttlafterfinished.Name,
	controllers.StatefulSetControllerName, controllers.CronJobControllerName,
	controllers.EndpointSliceControllerName, controllers.EndpointsControllerName, disruption.Name, podgc.Name, csrsigning.Name,
	csrcleaner.Name, csrapproving.Name, endpointslicemirroring.Name, ephemeral.Name, ttl.Name,
	nodelifecycle.Name, tainteviction.Name, pvbinder.Name, hpa.Name, servicecidrs.Name, resourceclaim.Name,
	vacprotection.Name}

// startWorkloadControllers runs the ReplicaSet, ReplicationController and
// Deployment controllers the selection turns on until ctx ends, each writing (and
// recording its events) through the loopback client as its
// kube-controller-manager service account, through admission.
func startWorkloadControllers(ctx context.Context, p *apiParts, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	api, store, cat := p.api, p.store, p.cat
	for _, kind := range []replicaset.Kind{replicaset.ReplicaSets, replicaset.ReplicationControllers} {
		if !sel.Enabled(kind.Name) {
			continue
		}
		l := log.With("controller", kind.Name)
		rt := controllerLoopback(ctx, api, kind.User, l)
		client, err := controllers.NewClientset(rt)
		if err != nil {
			return err
		}
		recorder, err := controllers.NewEventRecorder(ctx, rt, kind.Component, l)
		if err != nil {
			return err
		}
		c, err := replicaset.New(replicaset.Config{Kind: kind, Store: store, Catalogue: cat, Caches: caches, Client: client, Recorder: recorder, Log: l})
		if err != nil {
			return err
		}
		go c.Run(ctx)
	}
	if sel.Enabled(daemonset.Name) {
		if err := startDaemonSetController(ctx, api, store, cat, caches, log.With("controller", daemonset.Name)); err != nil {
			return err
		}
	}
	if err := startJobControllers(ctx, api, store, cat, caches, sel, log); err != nil {
		return err
	}
	if err := startEphemeralVolumeController(ctx, p, caches, sel, log); err != nil {
		return err
	}
	if err := startTTLController(ctx, api, store, cat, caches, sel, log); err != nil {
		return err
	}
	if err := startPVBinderController(ctx, p, caches, sel, log); err != nil {
		return err
	}
	if err := startHPAController(ctx, p, caches, sel, log); err != nil {
		return err
	}
	if err := startServiceCIDRController(ctx, p, caches, sel, log); err != nil {
		return err
	}
	if err := startResourceClaimController(ctx, p, caches, sel, log); err != nil {
		return err
	}
	if err := startVACProtectionController(ctx, p, caches, sel, log); err != nil {
		return err
	}
	if err := startStatefulSetController(ctx, api, store, cat, caches, sel, log); err != nil {
		return err
	}
	if err := startCronJobController(ctx, api, store, cat, caches, sel, log); err != nil {
		return err
	}
	if err := startEndpointsControllers(ctx, api, store, cat, caches, sel, log); err != nil {
		return err
	}
	if err := startEndpointSliceMirroringController(ctx, api, store, cat, caches, sel, log); err != nil {
		return err
	}
	if err := startDisruptionController(ctx, api, store, cat, caches, sel, log); err != nil {
		return err
	}
	if sel.Enabled(deployment.Name) {
		return startDeploymentController(ctx, api, store, cat, caches, log.With("controller", deployment.Name))
	}
	return nil
}

// startDeploymentController runs the Deployment controller until ctx
// ends, as kube-controller-manager's deployment-controller.
func startDeploymentController(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, log *slog.Logger) error {
	rt := controllerLoopback(ctx, api, deployment.User, log)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, deployment.Component, log)
	if err != nil {
		return err
	}
	c, err := deployment.New(deployment.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Recorder: recorder, Log: log})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
