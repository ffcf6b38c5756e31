package namespaceautoprovision

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// cluster holds namespaces and records the creates; "broken" cannot be
// read, "racing" is created concurrently and "refused" cannot be created.
type cluster struct {
	existing map[string]bool
	created  []*corev1.Namespace
}

var nsResource = schema.GroupResource{Resource: "namespaces"}

func (c *cluster) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if name == "broken" {
		return nil, errors.New("store unavailable")
	}
	if !c.existing[name] {
		return nil, apierrors.NewNotFound(nsResource, name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
}

func (c *cluster) CreateObject(_ context.Context, gvr schema.GroupVersionResource, namespace string, obj runtime.Object) error {
	ns := obj.(*corev1.Namespace)
	if gvr != namespacesResource || namespace != "" {
		return errors.New("unexpected create of " + gvr.String())
	}
	switch ns.Name {
	case "racing":
		return apierrors.NewAlreadyExists(nsResource, ns.Name)
	case "refused":
		return apierrors.NewForbidden(nsResource, ns.Name, errors.New("no"))
	case "failing":
		return apierrors.NewInternalError(errors.New("storage down"))
	}
	c.created = append(c.created, ns)
	c.existing[ns.Name] = true
	return nil
}

func cm(ns string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}}
}

func TestAdmit(t *testing.T) {
	c := &cluster{existing: map[string]bool{"live": true}}
	p := New(c, c)
	created := func(name string) func(t *testing.T, _ *admission.Attributes, _ error) {
		return func(t *testing.T, _ *admission.Attributes, _ error) {
			n := len(c.created)
			if name == "" {
				if n != 0 {
					t.Errorf("created %v, want nothing", c.created)
				}
				return
			}
			want := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
			if n != 1 || !apiEqual(c.created[0], want) {
				t.Errorf("created %v, want only %v", c.created, want)
			}
			c.created = nil
		}
	}
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "existing namespace", Attributes: admissiontest.Create(cm("live")).Attributes(), Check: created("")},
		{Name: "missing namespace is created", Attributes: admissiontest.Create(cm("new")).Attributes(), Check: created("new")},
		{Name: "dry run creates nothing", Attributes: admissiontest.Create(cm("dry")).DryRun().Attributes(), Check: created("")},
		{Name: "namespace itself", Attributes: admissiontest.Create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}).Attributes(), Check: created("")},
		{Name: "cluster-scoped", Attributes: admissiontest.Create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}).Attributes(), Check: created("")},
		{Name: "created concurrently", Attributes: admissiontest.Create(cm("racing")).Attributes(), Check: created("")},
		{Name: "create refused", Attributes: admissiontest.Create(cm("refused")).Attributes(), WantErr: `namespaces "refused" is forbidden: no`, WantCode: 403},
		{Name: "create failed", Attributes: admissiontest.Create(cm("failing")).Attributes(),
			WantErr: `configmaps "cm" is forbidden: Internal error occurred: storage down`, WantCode: 403},
		{Name: "lookup error", Attributes: admissiontest.Create(cm("broken")).Attributes(), WantErr: `configmaps "cm" is forbidden: store unavailable`, WantCode: 403},
		{Name: "update is not handled", Attributes: admissiontest.Update(cm("gone"), cm("gone")).Attributes(), Check: created("")},
	})
}

func apiEqual(a, b *corev1.Namespace) bool {
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.Namespace == "" && len(a.Labels) == 0 && len(a.Annotations) == 0
}
