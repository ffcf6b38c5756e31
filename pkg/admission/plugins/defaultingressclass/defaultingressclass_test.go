package defaultingressclass

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// classes is a cache holding IngressClasses only; err, when set, fails lists.
type classes struct {
	list []*networkingv1.IngressClass
	err  error
}

func (c classes) GetCachedObject(context.Context, schema.GroupVersionResource, string, string) (runtime.Object, error) {
	return nil, errors.New("not used")
}

func (c classes) ListCachedObjects(_ context.Context, gvr schema.GroupVersionResource, _ string, _ labels.Selector) ([]runtime.Object, error) {
	if gvr != ingressClassResource {
		return nil, nil
	}
	if c.err != nil {
		return nil, c.err
	}
	var out []runtime.Object
	for _, ic := range c.list {
		out = append(out, ic)
	}
	return out, nil
}

func class(name string, created time.Time, annotations map[string]string) *networkingv1.IngressClass {
	return &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created), Annotations: annotations}}
}

func ingress(class *string, annotation *string) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "testing", Namespace: "testing"}}
	ing.Spec.IngressClassName = class
	if annotation != nil {
		ing.Annotations = map[string]string{ClassAnnotation: *annotation}
	}
	return ing
}

func ptr(s string) *string { return &s }

func TestAdmit(t *testing.T) {
	t0 := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	isDefault := map[string]string{IsDefaultAnnotation: "true"}
	var (
		default1 = class("default1", time.Time{}, isDefault)
		default2 = class("default2", time.Time{}, isDefault)
		nonDef   = []*networkingv1.IngressClass{
			class("nondefault1", time.Time{}, map[string]string{IsDefaultAnnotation: "false"}),
			class("nondefault2", time.Time{}, nil),
			class("nondefault3", time.Time{}, map[string]string{IsDefaultAnnotation: ""}),
			class("nondefault4", time.Time{}, map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}),
		}
		newer = class("default1", t0.Add(time.Nanosecond), isDefault)
		older = class("default2", t0, isDefault)
	)
	with := func(cs ...*networkingv1.IngressClass) []*networkingv1.IngressClass { return append(cs, nonDef...) }
	for _, tc := range []struct {
		name       string
		classes    []*networkingv1.IngressClass
		field      *string
		annotation *string
		want       *string
	}{
		{"no default, no modification", nonDef, nil, nil, nil},
		{"one default, class nil", with(default1), nil, nil, ptr("default1")},
		{"one default, class field empty kept", with(default1), ptr(""), nil, ptr("")},
		{"one default, class field foo kept", with(default1), ptr("foo"), nil, ptr("foo")},
		{"one default, class annotation foo kept", with(default1), nil, ptr("foo"), nil},
		{"one default, empty class annotation kept", with(default1), nil, ptr(""), nil},
		{"two defaults, same time, lower name", with(default2, default1), nil, nil, ptr("default1")},
		{"two defaults, class field empty kept", with(default1, default2), ptr(""), nil, ptr("")},
		{"two defaults, newer wins by a nanosecond", with(older, newer), nil, nil, ptr("default1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(classes{list: tc.classes})
			admissiontest.Run(t, p, []admissiontest.Case{{Name: "admit",
				Attributes: admissiontest.Create(ingress(tc.field, tc.annotation)).Attributes(), WantObject: ingress(tc.want, tc.annotation)}})
		})
	}
}

func TestErrors(t *testing.T) {
	ingresses := networkingv1.SchemeGroupVersion.WithResource("ingresses")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "testing", Namespace: "testing"}}
	admissiontest.Run(t, New(classes{err: errors.New("cache broken")}), []admissiontest.Case{
		{Name: "list fails", Attributes: admissiontest.Create(ingress(nil, nil)).Attributes(),
			WantErr: `ingresses.networking.k8s.io "testing" is forbidden: cache broken`, WantCode: 403},
		{Name: "class set: no list", Attributes: admissiontest.Create(ingress(ptr("x"), nil)).Attributes()},
		{Name: "not an ingress", Attributes: admissiontest.Create(cm).Resource(ingresses, "").Attributes(),
			WantErr: "Internal error occurred: Expected Ingress resource, got: /v1, Kind=ConfigMap", WantCode: 500},
		{Name: "status subresource", Attributes: admissiontest.Create(cm).Resource(ingresses, "status").Attributes()},
		{Name: "other resource", Attributes: admissiontest.Create(cm).Attributes()},
	})
}
