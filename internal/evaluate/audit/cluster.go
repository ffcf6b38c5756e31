package audit

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/evaluate"
)

// DefaultPageSize is the limit of each list of a Cluster.
const DefaultPageSize = 500

// Cluster is the objects of a live cluster: every resource discovery
// lists as listable, in its preferred version, read page by page. It only
// reads.
type Cluster struct {
	Config   *rest.Config
	PageSize int64
	// Host names the cluster in sources ("<host>: pods").
	Host string
	// unlisted are the groups not listed and the resources the cluster
	// refused to list.
	unlisted []string
}

// Skipped are the groups not listed and the resources the cluster refused
// to list.
func (c *Cluster) Skipped() []string { return c.unlisted }

var (
	namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crdsResource       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	// seededResources are the resources of seededKinds; a cluster that
	// refuses to list one is named in Skipped.
	seededResources = []schema.GroupVersionResource{
		{Version: "v1", Resource: "limitranges"}, {Version: "v1", Resource: "resourcequotas"}, {Version: "v1", Resource: "serviceaccounts"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	}
)

// Seed are the cluster's namespaces and CRDs (which it must list), its
// LimitRanges, ResourceQuotas, ServiceAccounts and RBAC objects (named in
// Skipped when it refuses them), and the objects the bindings may read as
// params.
func (c *Cluster) Seed(ctx context.Context, params Params) ([]evaluate.Object, error) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	var s seeds
	keepAll := func(page []evaluate.Object) error {
		for _, o := range page {
			s.keep(o)
		}
		return nil
	}
	for _, gvr := range []schema.GroupVersionResource{namespacesResource, crdsResource} {
		if err := c.list(ctx, dyn, gvr, true, keepAll); err != nil {
			return nil, err
		}
	}
	for _, gvr := range seededResources {
		if err := c.list(ctx, dyn, gvr, false, keepAll); err != nil {
			return nil, err
		}
	}
	resources, err := c.paramResources(params)
	if err != nil {
		return nil, err
	}
	for _, gvr := range resources {
		err := c.list(ctx, dyn, gvr, false, func(page []evaluate.Object) error {
			for _, o := range page {
				if params.Match(o) {
					s.keep(o)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return s.objects(), nil
}

// paramResources are the resources of the params' kinds that the cluster
// serves.
func (c *Cluster) paramResources(params Params) ([]schema.GroupVersionResource, error) {
	if params.Empty() {
		return nil, nil
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	var out []schema.GroupVersionResource
	for _, gvk := range params.Kinds() {
		list, err := disc.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
		if err != nil {
			continue // not served: the bindings find no params in the cluster either
		}
		for _, r := range list.APIResources {
			if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") && hasVerb(r.Verbs, "list") {
				out = append(out, gvk.GroupVersion().WithResource(r.Name))
				break
			}
		}
	}
	return out, nil
}

// Each lists every listable resource, a page at a time.
func (c *Cluster) Each(ctx context.Context, fn func([]evaluate.Object) error) error {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	resources, err := c.resources()
	if err != nil {
		return err
	}
	for _, r := range resources {
		if err := c.list(ctx, dyn, r, false, fn); err != nil {
			return err
		}
	}
	return nil
}

// resources are the preferred versions of the listable resources, no
// subresources, cluster's order.
func (c *Cluster) resources() ([]schema.GroupVersionResource, error) {
	disc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	lists, err := discovery.ServerPreferredResources(disc)
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovering the cluster's resources: %w", err)
	}
	var out []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		if why, skip := skippedGroups[gv.Group]; skip {
			c.unlisted = append(c.unlisted, gv.Group+": "+why)
			continue
		}
		for _, r := range l.APIResources {
			gvr := gv.WithResource(r.Name)
			if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") || servedTwice[gvr.GroupResource()] {
				continue
			}
			out = append(out, gvr)
		}
	}
	return out, nil
}

// servedTwice are resources whose objects are another group's, listed
// there: events.k8s.io's Events are the core group's (audited once, as
// the core Events they are; an Event a legacy recorder made is not valid
// written back through events.k8s.io).
var servedTwice = map[schema.GroupResource]bool{{Group: "events.k8s.io", Resource: "events"}: true}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

// list pages through gvr; a resource the cluster refuses to list is an
// error only when required.
func (c *Cluster) list(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, required bool,
	fn func([]evaluate.Object) error) error {
	limit := c.PageSize
	if limit <= 0 {
		limit = DefaultPageSize
	}
	opts := metav1.ListOptions{Limit: limit}
	for {
		l, err := dyn.Resource(gvr).List(ctx, opts)
		if err != nil {
			if required {
				return fmt.Errorf("listing %s: %w", gvr.Resource, err)
			}
			c.unlisted = append(c.unlisted, fmt.Sprintf("%s: not listed: %v", gvr.GroupResource(), err))
			return nil
		}
		if err := fn(c.objects(gvr, l)); err != nil {
			return err
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}

func (c *Cluster) objects(gvr schema.GroupVersionResource, l *unstructured.UnstructuredList) []evaluate.Object {
	source := gvr.Resource
	if gvr.Group != "" {
		source += "." + gvr.Group
	}
	if c.Host != "" {
		source = c.Host + ": " + source
	}
	out := make([]evaluate.Object, len(l.Items))
	for i := range l.Items {
		out[i] = evaluate.Object{Unstructured: &l.Items[i], Source: source}
	}
	return out
}

func namespace(name, source string) evaluate.Object {
	return evaluate.Object{Source: source, Unstructured: &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}}
}
