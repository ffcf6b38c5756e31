package defaultstorageclass

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// classes is a cache holding StorageClasses only; err, when set, fails lists.
type classes struct {
	list []*storagev1.StorageClass
	err  error
}

func (c classes) GetCachedObject(context.Context, schema.GroupVersionResource, string, string) (runtime.Object, error) {
	return nil, errors.New("not used")
}

func (c classes) ListCachedObjects(_ context.Context, gvr schema.GroupVersionResource, _ string, _ labels.Selector) ([]runtime.Object, error) {
	if gvr != storageClassResource {
		return nil, nil
	}
	if c.err != nil {
		return nil, c.err
	}
	var out []runtime.Object
	for _, sc := range c.list {
		out = append(out, sc)
	}
	return out, nil
}

func class(name string, created time.Time, annotations map[string]string) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created), Annotations: annotations},
		Provisioner: name}
}

func claim(class *string, annotations map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Annotations: annotations},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class}}
}

func ptr(s string) *string { return &s }

func TestAdmit(t *testing.T) {
	t0 := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	isDefault := map[string]string{IsDefaultAnnotation: "true"}
	var (
		default1   = class("default1", time.Time{}, isDefault)
		default2   = class("default2", time.Time{}, isDefault)
		betaDef    = class("beta", time.Time{}, map[string]string{BetaIsDefaultAnnotation: "true"})
		falseDef   = class("nondefault1", time.Time{}, map[string]string{IsDefaultAnnotation: "false"})
		noDef      = class("nondefault2", time.Time{}, nil)
		emptyDef   = class("nondefault3", time.Time{}, map[string]string{IsDefaultAnnotation: ""})
		upperDef   = class("nondefault4", time.Time{}, map[string]string{IsDefaultAnnotation: "True"})
		newer      = class("default1", t0.Add(time.Nanosecond), isDefault)
		older      = class("default2", t0, isDefault)
		newerZ     = class("zzz", t0.Add(time.Hour), isDefault)
		nonDefault = []*storagev1.StorageClass{falseDef, noDef, emptyDef, upperDef}
	)
	with := func(cs ...*storagev1.StorageClass) []*storagev1.StorageClass { return append(cs, nonDefault...) }
	for _, tc := range []struct {
		name    string
		classes []*storagev1.StorageClass
		claim   *corev1.PersistentVolumeClaim
		want    *string
	}{
		{"no default, no modification", nonDefault, claim(nil, nil), nil},
		{"one default, class nil", with(default1), claim(nil, nil), ptr("default1")},
		{"one default, class empty kept", with(default1), claim(ptr(""), nil), ptr("")},
		{"one default, class foo kept", with(default1), claim(ptr("foo"), nil), ptr("foo")},
		{"one default, beta class annotation kept", with(default1), claim(nil, map[string]string{BetaClassAnnotation: ""}), nil},
		{"two defaults, class empty kept", with(default1, default2), claim(ptr(""), nil), ptr("")},
		{"two defaults, same time, smaller name", with(default2, default1), claim(nil, nil), ptr("default1")},
		{"two defaults, newer wins by a nanosecond", with(older, newer), claim(nil, nil), ptr("default1")},
		{"newer wins over name", with(default1, newerZ), claim(nil, nil), ptr("zzz")},
		{"beta default annotation", with(betaDef), claim(nil, nil), ptr("beta")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(classes{list: tc.classes})
			pvc := tc.claim
			want := claim(tc.want, tc.claim.Annotations)
			admissiontest.Run(t, p, []admissiontest.Case{{Name: "admit", Attributes: admissiontest.Create(pvc).Attributes(), WantObject: want}})
		})
	}
}

func TestIgnored(t *testing.T) {
	p := New(classes{list: []*storagev1.StorageClass{class("d", time.Time{}, map[string]string{IsDefaultAnnotation: "true"})}})
	pvc := claim(nil, nil)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}}
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "status subresource", Attributes: admissiontest.Create(pvc).
			Resource(corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), "status").Attributes(), WantObject: claim(nil, nil)},
		{Name: "update", Attributes: admissiontest.Update(pvc, claim(nil, nil)).Attributes(), WantObject: claim(nil, nil)},
		{Name: "not a claim", Attributes: admissiontest.Create(cm).
			Resource(corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), "").Attributes()},
	})
}

func TestListError(t *testing.T) {
	p := New(classes{err: errors.New("cache broken")})
	admissiontest.Run(t, p, []admissiontest.Case{{Name: "list fails", Attributes: admissiontest.Create(claim(nil, nil)).Attributes(),
		WantErr: `persistentvolumeclaims "c" is forbidden: cache broken`, WantCode: 403}})
}

func TestRegister(t *testing.T) {
	r := admission.NewRegistry()
	Register(r)
	if !r.Registered(Name) {
		t.Fatalf("Registered(%q) = false, want true", Name)
	}
}
