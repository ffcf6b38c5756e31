package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/serviceaccount"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/serviceaccount"
)

// world is the cluster both plugins read: cached accounts are in the
// informer (admitd: the watch cache), stored ones only in the live client
// (admitd: storage).
type world struct {
	cached, stored []*corev1.ServiceAccount
	objects        map[string]runtime.Object
	upstream       *upstream.Plugin
	ours           *ours.Plugin
}

func (w *world) GetObject(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	if o, ok := w.objects[namespace+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

// cache is the watch cache: the cached accounts only.
type cache struct{ w *world }

func (c cache) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	for _, sa := range c.w.cached {
		if sa.Namespace == namespace && sa.Name == name {
			return sa, nil
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (c cache) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	return nil, errors.New("not used")
}

func (w *world) build(t testing.TB) {
	w.objects = map[string]runtime.Object{}
	var all []runtime.Object
	for _, sa := range append(append([]*corev1.ServiceAccount{}, w.cached...), w.stored...) {
		w.objects[sa.Namespace+"/"+sa.Name] = sa
		all = append(all, sa)
	}
	client := fake.NewClientset(all...)
	f := informers.NewSharedInformerFactory(client, 0)
	idx := f.Core().V1().ServiceAccounts().Informer().GetIndexer()
	for _, sa := range w.cached {
		if err := idx.Add(sa); err != nil {
			t.Fatal(err)
		}
	}
	p := upstream.NewServiceAccount()
	p.SetExternalKubeClientSet(client)
	p.SetExternalKubeInformerFactory(f)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	w.upstream = p
	w.ours = ours.New(cache{w}, w)
}

// request is one admission request, in v1 objects defaulted as the server
// defaults them.
type request struct {
	name        string
	op          admission.Operation
	resource    string
	subresource string
	namespace   string
	obj, old    runtime.Object
}

func toInternal(t testing.TB, obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Group: "", Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatalf("converting %T: %v", obj, err)
	}
	return out
}

func toV1(t testing.TB, obj runtime.Object) runtime.Object {
	out, err := legacyscheme.Scheme.ConvertToVersion(obj, corev1.SchemeGroupVersion)
	if err != nil {
		t.Fatalf("converting %T: %v", obj, err)
	}
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out
}

func defaulted(obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	obj = obj.DeepCopyObject()
	legacyscheme.Scheme.Default(obj)
	return obj
}

// compare sends r through both plugins (Admit, then Validate when
// admitted) and returns upstream's outcome.
func (w *world) compare(t *testing.T, r request) string {
	t.Helper()
	obj, old := defaulted(r.obj), defaulted(r.old)
	gvr := corev1.SchemeGroupVersion.WithResource(r.resource)
	kind := corev1.SchemeGroupVersion.WithKind("Pod")
	name := ""
	if p, ok := obj.(*corev1.Pod); ok {
		name = p.Name
	}
	a := &admission.Attributes{Name: name, Namespace: r.namespace, Resource: gvr, Subresource: r.subresource, Kind: kind,
		Operation: r.op, Object: obj, OldObject: old, Record: admission.NewRecord()}
	ourErr := w.ours.Admit(context.Background(), a)
	if ourErr == nil {
		ourErr = w.ours.Validate(context.Background(), a)
	}
	uobj := toInternal(t, obj)
	ua := upadmission.NewAttributesRecord(uobj, toInternal(t, old), kind, r.namespace, name, gvr, r.subresource,
		upadmission.Operation(r.op), nil, false, &user.DefaultInfo{Name: "alice"})
	upErr := w.upstream.Admit(context.Background(), ua, nil)
	if upErr == nil {
		upErr = w.upstream.Validate(context.Background(), ua, nil)
	}
	if got, want := describe(ourErr), describe(upErr); got != want {
		t.Errorf("%s: admitd = %s\n upstream = %s", r.name, got, want)
	}
	if upErr == nil && uobj != nil {
		want := mask(toV1(t, uobj))
		if diff := cmp.Diff(want, mask(a.Object)); diff != "" {
			t.Errorf("%s: mutated object differs (-upstream +admitd):\n%s", r.name, diff)
		}
	}
	return describe(upErr)
}

func describe(err error) string {
	if err == nil {
		return "admitted"
	}
	var code int32
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code = st.Status().Code
	}
	return fmt.Sprintf("%d %q", code, err.Error())
}

var generated = regexp.MustCompile(`^kube-api-access-[a-z0-9]{5}$`)

// mask replaces the random suffix of token volume names, in volumes and
// mounts alike.
func mask(obj runtime.Object) runtime.Object {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj
	}
	pod = pod.DeepCopy()
	fix := func(name *string) {
		if generated.MatchString(*name) {
			*name = "kube-api-access-XXXXX"
		}
	}
	for i := range pod.Spec.Volumes {
		fix(&pod.Spec.Volumes[i].Name)
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			for j := range cs[i].VolumeMounts {
				fix(&cs[i].VolumeMounts[j].Name)
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		for j := range pod.Spec.EphemeralContainers[i].VolumeMounts {
			fix(&pod.Spec.EphemeralContainers[i].VolumeMounts[j].Name)
		}
	}
	return pod
}
