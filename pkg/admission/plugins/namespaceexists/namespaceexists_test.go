package namespaceexists

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// namespaces holds the existing namespaces; "broken" fails to be read.
type namespaces map[string]bool

func (n namespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if name == "broken" {
		return nil, errors.New("store unavailable")
	}
	if !n[name] {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
}

func cm(ns string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}}
}

func TestValidate(t *testing.T) {
	p := New(namespaces{"live": true})
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "create in existing namespace", Attributes: admissiontest.Create(cm("live")).Attributes()},
		{Name: "create in missing namespace", Attributes: admissiontest.Create(cm("gone")).Attributes(), WantErr: `namespaces "gone" not found`, WantCode: 404},
		{Name: "update in missing namespace", Attributes: admissiontest.Update(cm("gone"), cm("gone")).Attributes(), WantErr: `namespaces "gone" not found`, WantCode: 404},
		{Name: "delete in missing namespace", Attributes: admissiontest.Delete(cm("gone")).Attributes(), WantErr: `namespaces "gone" not found`, WantCode: 404},
		{Name: "delete in existing namespace", Attributes: admissiontest.Delete(cm("live")).Attributes()},
		{Name: "connect is not handled", Attributes: admissiontest.Connect(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "gone"}}, "exec").Attributes()},
		{Name: "namespace itself", Attributes: admissiontest.Create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gone"}}).Attributes()},
		{Name: "cluster-scoped", Attributes: admissiontest.Create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}).Attributes()},
		{Name: "lookup error", Attributes: admissiontest.Create(cm("broken")).Attributes(), WantErr: "Internal error occurred: store unavailable", WantCode: 500},
	})
}
