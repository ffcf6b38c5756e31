package controllers

import (
	"context"
	"log/slog"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/auth/rbac"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// ClusterRoleAggregation keeps the rules of every ClusterRole with an
// aggregationRule equal to the rules of the ClusterRoles its selectors
// pick (rbac.AggregatedRules): the job of kube-controller-manager's
// clusterrole-aggregation controller. Any ClusterRole write re-examines them
// all; an aggregated role picked by another one converges over successive
// passes, each write being itself a ClusterRole write. It reads from
// storage and updates through the API as its own user.
type ClusterRoleAggregation struct {
	store  storage.Store
	cat    *registry.Catalogue
	client dynamic.Interface
	log    *slog.Logger
	queue  workqueue.TypedRateLimitingInterface[string]
}

// ClusterRoleAggregationUser is the user the controller's updates run as.
var ClusterRoleAggregationUser = ControllerUser("clusterrole-aggregation-controller")

var clusterRolesGVR = rbacv1.SchemeGroupVersion.WithResource("clusterroles")

// clusterRolesPrefix is where ClusterRoles are stored.
var clusterRolesPrefix = layout.GroupPrefix(rbacv1.GroupName) + "clusterroles/"

// aggregateAll is the one queue item: every pass looks at every role.
const aggregateAll = "all"

// NewClusterRoleAggregation returns the controller; its updates go through
// client (as ClusterRoleAggregationUser).
func NewClusterRoleAggregation(store storage.Store, cat *registry.Catalogue, client dynamic.Interface, log *slog.Logger) *ClusterRoleAggregation {
	return &ClusterRoleAggregation{store: store, cat: cat, client: client, log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "ClusterRoleAggregator"})}
}

// Run keeps aggregated ClusterRoles up to date until ctx ends.
func (c *ClusterRoleAggregation) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	go follow(ctx, c.store, clusterRolesPrefix, c, c.log)
	for c.processNext(ctx) {
	}
}

func (c *ClusterRoleAggregation) reset([]storage.KeyValue) { c.queue.Add(aggregateAll) }

func (c *ClusterRoleAggregation) event(ev storage.Event) {
	if strings.HasPrefix(ev.KV.Key, clusterRolesPrefix) {
		c.queue.Add(aggregateAll)
	}
}

func (c *ClusterRoleAggregation) processNext(ctx context.Context) bool {
	item, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(item)
	if err := c.sync(ctx); err != nil && ctx.Err() == nil {
		c.log.Debug("aggregating cluster roles will retry", "err", err)
		c.queue.AddRateLimited(item)
		return true
	}
	c.queue.Forget(item)
	return true
}

// sync updates every aggregated ClusterRole whose rules are out of date.
func (c *ClusterRoleAggregation) sync(ctx context.Context) error {
	roles, err := c.list(ctx)
	if err != nil {
		return err
	}
	var firstErr error
	for _, role := range roles {
		rules, ok, err := rbac.AggregatedRules(role, roles)
		if !ok || err != nil || equality.Semantic.DeepEqual(rules, role.Rules) {
			continue
		}
		if err := c.update(ctx, role, rules); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// list reads every stored ClusterRole.
func (c *ClusterRoleAggregation) list(ctx context.Context) ([]*rbacv1.ClusterRole, error) {
	res, ok := c.cat.Lookup(clusterRolesGVR)
	if !ok {
		return nil, nil
	}
	rev, err := c.store.Revision(ctx)
	if err != nil {
		return nil, err
	}
	_, objs, err := layout.List(ctx, c.store, res, rev)
	if err != nil {
		return nil, err
	}
	roles := make([]*rbacv1.ClusterRole, 0, len(objs))
	for _, obj := range objs {
		if r, ok := obj.(*rbacv1.ClusterRole); ok {
			roles = append(roles, r)
		}
	}
	return roles, nil
}

// update applies rules to role as upstream's controller does: a forced
// server-side apply of the rules alone by
// clusterrole-aggregation-controller, whose fields they become (no rules:
// an apply without them, which lets go of them).
func (c *ClusterRoleAggregation) update(ctx context.Context, role *rbacv1.ClusterRole, rules []rbacv1.PolicyRule) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&rbacv1.ClusterRole{Rules: rules})
	if err != nil {
		return err
	}
	applied := &unstructured.Unstructured{Object: map[string]any{"apiVersion": rbacv1.SchemeGroupVersion.String(), "kind": "ClusterRole",
		"metadata": map[string]any{"name": role.Name}}}
	if len(rules) > 0 { // none: the apply leaves them out, as upstream's
		applied.Object["rules"] = content["rules"]
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = c.client.Resource(clusterRolesGVR).Apply(ctx, role.Name, applied,
		metav1.ApplyOptions{FieldManager: "clusterrole-aggregation-controller", Force: true})
	return err
}
