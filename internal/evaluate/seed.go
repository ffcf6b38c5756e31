package evaluate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// cluster is an administrator's view of the in-process server.
type cluster struct {
	// admin is the administrator's connection, to impersonate others.
	admin         *rest.Config
	setupWarnings *warningCollector
	dyn           dynamic.Interface
	disc          discovery.DiscoveryInterface
	mapper        meta.RESTMapper
	// awaitServiceAccounts: the server's controller creates the default
	// ServiceAccount of a namespace, and requests wait for it.
	awaitServiceAccounts bool
}

func (in *instance) cluster() (*cluster, error) {
	warnings := &warningCollector{}
	cfg := rest.CopyConfig(in.admin)
	cfg.WarningHandler = warnings
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(in.admin)
	if err != nil {
		return nil, err
	}
	c := &cluster{admin: cfg, dyn: dyn, disc: disc, setupWarnings: warnings, awaitServiceAccounts: in.defaultServiceAccounts}
	return c, c.refreshMapper()
}

func (c *cluster) refreshMapper() error {
	groups, err := restmapper.GetAPIGroupResources(c.disc)
	if err != nil && len(groups) == 0 {
		return fmt.Errorf("discovering the in-process server's resources: %w", err)
	}
	c.mapper = restmapper.NewDiscoveryRESTMapper(groups)
	return nil
}

// resourceOf maps an object's kind to its resource; namespaced objects
// without a namespace get ns (or "default").
func (c *cluster) resourceOf(u *unstructured.Unstructured, ns string) (dynamic.ResourceInterface, schema.GroupVersionResource, error) {
	gvk := u.GroupVersionKind()
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, schema.GroupVersionResource{}, fmt.Errorf("the server does not serve %s", gvk)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return c.dyn.Resource(m.Resource), m.Resource, nil
	}
	switch {
	case ns != "":
		u.SetNamespace(ns)
	case u.GetNamespace() == "":
		u.SetNamespace("default")
	}
	return c.dyn.Resource(m.Resource).Namespace(u.GetNamespace()), m.Resource, nil
}

// seed creates objs in dependency order: CRDs (then waits until they are
// served), namespaces, other objects, then admission configurations with
// policies before bindings, so that no configuration given admits
// another given object.
func (c *cluster) seed(ctx context.Context, objs []Object) error {
	crds, namespaces, plain, configs := partition(objs)
	for _, o := range crds {
		if err := c.put(ctx, o); err != nil {
			return err
		}
	}
	if len(crds) > 0 {
		if err := c.awaitCRDs(ctx, crds); err != nil {
			return err
		}
	}
	for _, group := range [][]Object{namespaces, plain} {
		for _, o := range group {
			if err := c.put(ctx, o); err != nil {
				return err
			}
		}
	}
	c.awaitAggregation(ctx, plain)
	for _, o := range configs {
		if err := c.put(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

var clusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}

// awaitAggregation waits (briefly) until every aggregated ClusterRole
// given has rules, which the server's aggregation controller fills from
// the roles its selectors pick, as they are in a cluster by the time
// anyone relies on them.
//
// The authorizer may not see the controller's write at once (it catches up
// within a second, from its watch): an RBAC write of eval's own, before any
// configuration given exists, makes it read the current policy.
func (c *cluster) awaitAggregation(ctx context.Context, objs []Object) {
	deadline := time.Now().Add(2 * time.Second)
	aggregated := false
	defer func() {
		if aggregated {
			c.touchRBAC(ctx)
		}
	}()
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" || o.Object["aggregationRule"] == nil {
			continue
		}
		aggregated = true
		for ; time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			got, err := c.dyn.Resource(clusterRoles).Get(ctx, o.GetName(), metav1.GetOptions{})
			if err != nil {
				break
			}
			if rules, _, _ := unstructured.NestedSlice(got.Object, "rules"); len(rules) > 0 {
				break
			}
		}
	}
}

func partition(objs []Object) (crds, namespaces, plain, configs []Object) {
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		switch {
		case gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition":
			crds = append(crds, o)
		case gvk.Group == "" && gvk.Kind == "Namespace":
			namespaces = append(namespaces, o)
		case gvk.Group == "admissionregistration.k8s.io":
			configs = append(configs, o)
		default:
			plain = append(plain, o)
		}
	}
	slices.SortStableFunc(configs, func(a, b Object) int { return bindingRank(a) - bindingRank(b) })
	return crds, namespaces, plain, configs
}

func bindingRank(o Object) int {
	if strings.HasSuffix(o.GetKind(), "Binding") {
		return 1
	}
	return 0
}

// put creates o, or replaces the object of that name when it exists (the
// server's own namespaces, the default ServiceAccount its controller
// made), then writes its status through the status subresource.
func (c *cluster) put(ctx context.Context, o Object) error {
	u := o.DeepCopy()
	clearServerSet(u)
	ri, gvr, err := c.resourceOf(u, "")
	if err != nil {
		return &ConfigError{Err: fmt.Errorf("%s: %w", o.Source, err)}
	}
	stored, err := c.create(ctx, ri, gvr, u)
	if apierrors.IsAlreadyExists(err) {
		stored, err = c.replace(ctx, ri, u)
	}
	if err != nil {
		return &ConfigError{Err: fmt.Errorf("%s: creating %s %s: %w", o.Source, u.GetKind(), name(u), err)}
	}
	status, ok := u.Object["status"].(map[string]any)
	if !ok || len(status) == 0 {
		return nil
	}
	err = writeStatus(ctx, ri, stored, status)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
		return &ConfigError{Err: fmt.Errorf("%s: writing the status of %s %s: %w", o.Source, u.GetKind(), name(u), err)}
	}
	return nil
}

// writeStatus sets the stored object's status, again on a conflict with a
// controller that wrote it meanwhile (the quota controller).
func writeStatus(ctx context.Context, ri dynamic.ResourceInterface, stored *unstructured.Unstructured, status map[string]any) error {
	for try := 0; ; try++ {
		stored.Object["status"] = status
		_, err := ri.UpdateStatus(ctx, stored, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) || try == 5 {
			return err
		}
		if stored, err = ri.Get(ctx, stored.GetName(), metav1.GetOptions{}); err != nil {
			return err
		}
	}
}

func (c *cluster) replace(ctx context.Context, ri dynamic.ResourceInterface, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	cur, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return replaceOver(ctx, ri, cur, u)
}

// replaceOver replaces cur, the stored object, with u, whatever
// resourceVersion and uid u carries from where it was copied.
func replaceOver(ctx context.Context, ri dynamic.ResourceInterface, cur, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u.SetResourceVersion(cur.GetResourceVersion())
	if u.GetUID() != "" {
		u.SetUID(cur.GetUID())
	}
	if u.GetKind() == "Namespace" {
		if _, ok := u.Object["spec"]; !ok {
			u.Object["spec"] = cur.Object["spec"]
		}
	}
	return ri.Update(ctx, u, metav1.UpdateOptions{})
}

// clearServerSet removes the metadata a server sets, which an object
// copied from a cluster or an AdmissionReview carries and a create refuses
// (resourceVersion) or ignores.
func clearServerSet(u *unstructured.Unstructured) {
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	for _, k := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink",
		"deletionTimestamp", "deletionGracePeriodSeconds"} {
		delete(md, k)
	}
}

func name(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// awaitCRDs waits until every CRD is Established and its kinds are
// discovered.
func (c *cluster) awaitCRDs(ctx context.Context, crds []Object) error {
	deadline := time.Now().Add(10 * time.Second)
	for _, o := range crds {
		for !c.established(ctx, o.GetName()) {
			if time.Now().After(deadline) {
				return &ConfigError{Err: fmt.Errorf("%s: CustomResourceDefinition %s was not established in 10s", o.Source, o.GetName())}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return c.refreshMapper()
}

func (c *cluster) established(ctx context.Context, name string) bool {
	got, err := c.dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	for _, cond := range conds {
		if m, ok := cond.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// touchRBAC creates and deletes a ClusterRole without rules, so that the
// server reloads its RBAC policy.
func (c *cluster) touchRBAC(ctx context.Context) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
		"metadata": map[string]any{"generateName": "admitd-eval-sync-"}}}
	made, err := c.dyn.Resource(clusterRoles).Create(ctx, u, metav1.CreateOptions{})
	if err == nil {
		_ = c.dyn.Resource(clusterRoles).Delete(ctx, made.GetName(), metav1.DeleteOptions{})
	}
}

// awaitServiceAccount waits (briefly) for the default ServiceAccount the
// server's controller creates in a namespace, as it exists in a cluster
// by the time anyone creates a pod there.
func (c *cluster) awaitServiceAccount(ctx context.Context, ns string) {
	if !c.awaitServiceAccounts {
		return
	}
	sa := c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}).Namespace(ns)
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := sa.Get(ctx, "default", metav1.GetOptions{}); err == nil || !apierrors.IsNotFound(err) {
			return
		}
		if _, err := c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(ctx, ns, metav1.GetOptions{}); err != nil {
			return
		}
	}
}
