package lint

import (
	"context"
	"fmt"

	v1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// admissionResources are the kinds read from a server, each at the first
// version of admissionVersions the server serves it in.
var admissionResources = []string{
	"mutatingwebhookconfigurations", "validatingwebhookconfigurations",
	"validatingadmissionpolicies", "validatingadmissionpolicybindings",
	"mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
}

var admissionVersions = []string{"v1", "v1beta1", "v1alpha1"}

// FromServer reads the admission configuration of the server cfg points
// at: the webhook configurations, policies and bindings, all namespaces
// (for their labels), the Services of service webhooks, the
// CustomResourceDefinitions (when the reader may list them) and the
// objects of every policy's paramKind.
func FromServer(ctx context.Context, cfg *rest.Config) (*Set, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	r := serverReader{client: client, source: cfg.Host, set: &Set{}}
	for _, res := range admissionResources {
		gvr, ok := servedVersion(dc, res)
		if !ok {
			continue
		}
		if err := r.list(ctx, gvr, ""); err != nil {
			return nil, err
		}
	}
	if err := r.list(ctx, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, ""); err != nil {
		return nil, err
	}
	if err := r.services(ctx); err != nil {
		return nil, err
	}
	// The CRDs type the custom resources policies match (AL030); a reader
	// that may not list them lints without their schemas.
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if err := r.list(ctx, crds, ""); err != nil && !apierrors.IsForbidden(err) {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	if err := r.params(ctx, mapper); err != nil {
		return nil, err
	}
	return r.set, nil
}

func servedVersion(dc discovery.DiscoveryInterface, resource string) (schema.GroupVersionResource, bool) {
	for _, v := range admissionVersions {
		gv := admissionGroup + "/" + v
		list, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if r.Name == resource {
				return schema.GroupVersionResource{Group: admissionGroup, Version: v, Resource: resource}, true
			}
		}
	}
	return schema.GroupVersionResource{}, false
}

type serverReader struct {
	client dynamic.Interface
	source string
	set    *Set
}

// list adds every object of gvr (in namespace ns, or all); a resource the
// server does not serve is skipped.
func (r *serverReader) list(ctx context.Context, gvr schema.GroupVersionResource, ns string) error {
	list, err := r.client.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing %s: %w", gvr.GroupResource(), err)
	}
	kind := list.GetKind()
	if len(kind) > 4 && kind[len(kind)-4:] == "List" {
		kind = kind[:len(kind)-4]
	}
	for i := range list.Items {
		item := &list.Items[i]
		if item.GetKind() == "" {
			item.SetAPIVersion(gvr.GroupVersion().String())
			item.SetKind(kind)
		}
		if err := r.set.Add(item, r.source); err != nil {
			return err
		}
	}
	return nil
}

// services reads the Service of every service webhook.
func (r *serverReader) services(ctx context.Context) error {
	seen := map[string]bool{}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	for _, h := range r.set.hooks() {
		ref := h.client.Service
		if ref == nil || seen[ref.Namespace+"/"+ref.Name] {
			continue
		}
		seen[ref.Namespace+"/"+ref.Name] = true
		svc, err := r.client.Resource(gvr).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading service %s/%s: %w", ref.Namespace, ref.Name, err)
		}
		if err := r.set.Add(svc, r.source); err != nil {
			return err
		}
	}
	return nil
}

// params lists the objects of every policy's paramKind; a kind the server
// does not know has no objects.
func (r *serverReader) params(ctx context.Context, mapper *restmapper.DeferredDiscoveryRESTMapper) error {
	var kinds []*v1.ParamKind
	for _, p := range r.set.ValidatingPolicies {
		kinds = append(kinds, p.Spec.ParamKind)
	}
	for _, p := range r.set.MutatingPolicies {
		kinds = append(kinds, p.Spec.ParamKind)
	}
	seen := map[schema.GroupVersionKind]bool{}
	for _, pk := range kinds {
		if pk == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(pk.APIVersion)
		if err != nil {
			continue
		}
		gvk := gv.WithKind(pk.Kind)
		if seen[gvk] || (gvk.Group == "" && (gvk.Kind == "Namespace" || gvk.Kind == "Service")) {
			continue
		}
		seen[gvk] = true
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			r.set.unservedKinds = append(r.set.unservedKinds, gvk)
			continue
		}
		if err := r.list(ctx, m.Resource, ""); err != nil {
			return err
		}
	}
	return nil
}
