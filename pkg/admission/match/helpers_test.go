package match_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

func gvk(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

// fakeNamespaces serves namespaces from a map and counts lookups. The
// namespace "broken" fails with a non-status error.
type fakeNamespaces struct {
	items map[string]*corev1.Namespace
	calls atomic.Int64
}

var errBroken = errors.New("storage is broken")

func (f *fakeNamespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	f.calls.Add(1)
	if name == "broken" {
		return nil, errBroken
	}
	if ns, ok := f.items[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

func namespaceObj(name string, lbls map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

func newNamespaces(nss ...*corev1.Namespace) *fakeNamespaces {
	f := &fakeNamespaces{items: map[string]*corev1.Namespace{}}
	for _, ns := range nss {
		f.items[ns.Name] = ns
	}
	return f
}

// deploymentsMapper is upstream's test mapper: deployments of every group
// share storage; the scale subresource has a kind per version; widgets have
// no kinds at all.
func deploymentsMapper() runtime.EquivalentResourceRegistry {
	m := runtime.NewEquivalentResourceRegistryWithIdentity(func(gr schema.GroupResource) string {
		if gr.Resource == "deployments" {
			return "/deployments"
		}
		return ""
	})
	m.RegisterKindFor(gvr("extensions", "v1beta1", "deployments"), "", gvk("extensions", "v1beta1", "Deployment"))
	m.RegisterKindFor(gvr("apps", "v1", "deployments"), "", gvk("apps", "v1", "Deployment"))
	m.RegisterKindFor(gvr("apps", "v1beta1", "deployments"), "", gvk("apps", "v1beta1", "Deployment"))
	m.RegisterKindFor(gvr("apps", "v1alpha1", "deployments"), "", gvk("apps", "v1alpha1", "Deployment"))
	m.RegisterKindFor(gvr("extensions", "v1beta1", "deployments"), "scale", gvk("extensions", "v1beta1", "Scale"))
	m.RegisterKindFor(gvr("apps", "v1", "deployments"), "scale", gvk("autoscaling", "v1", "Scale"))
	m.RegisterKindFor(gvr("apps", "v1beta1", "deployments"), "scale", gvk("apps", "v1beta1", "Scale"))
	m.RegisterKindFor(gvr("apps", "v1alpha1", "deployments"), "scale", gvk("apps", "v1alpha1", "Scale"))
	m.RegisterKindFor(gvr("example.com", "v1", "widgets"), "", gvk("", "", ""))
	m.RegisterKindFor(gvr("example.com", "v2", "widgets"), "", gvk("", "", ""))
	return m
}

// rule builds a RuleWithOperations; scope "" leaves it nil.
func rule(ops []string, groups, versions, resources []string, scope string) v1.RuleWithOperations {
	r := v1.RuleWithOperations{Rule: v1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources}}
	for _, op := range ops {
		r.Operations = append(r.Operations, v1.OperationType(op))
	}
	if scope != "" {
		s := v1.ScopeType(scope)
		r.Scope = &s
	}
	return r
}

func all() []string { return []string{"*"} }

func ptr[T any](v T) *T { return &v }

var everything = &metav1.LabelSelector{}

func attrs(op admission.Operation, ns, name string, res schema.GroupVersionResource, sub string, kind schema.GroupVersionKind) *admission.Attributes {
	return &admission.Attributes{
		Name: name, Namespace: ns, Resource: res, Subresource: sub, Kind: kind,
		Operation: op, Record: admission.NewRecord(),
	}
}

func matchOne(t *testing.T, env match.Env, c *match.Criteria, a *admission.Attributes) match.Decision {
	t.Helper()
	r := match.NewRequest(context.Background(), env, a)
	return c.Match(&r)
}
