package priority

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
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
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/priority"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/priority"
)

// world is a set of PriorityClasses both plugins read: upstream from an
// informer, admitd from a cache listing them by name, as the watch cache
// does.
type world struct {
	classes  []*schedulingv1.PriorityClass
	upstream *upstream.Plugin
	ours     *ours.Plugin
}

func (w *world) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	for _, pc := range w.classes {
		if pc.Name == name {
			return pc, nil
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (w *world) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, pc := range w.classes {
		out = append(out, pc)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].(*schedulingv1.PriorityClass).Name < out[j].(*schedulingv1.PriorityClass).Name
	})
	return out, nil
}

func newWorld(t testing.TB, classes ...*schedulingv1.PriorityClass) *world {
	w := &world{}
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	idx := f.Scheduling().V1().PriorityClasses().Informer().GetIndexer()
	for _, pc := range classes {
		pc = defaulted(pc).(*schedulingv1.PriorityClass) // as stored
		w.classes = append(w.classes, pc)
		if err := idx.Add(pc); err != nil {
			t.Fatal(err)
		}
	}
	p := upstream.NewPlugin()
	p.SetExternalKubeClientSet(fake.NewClientset())
	p.SetExternalKubeInformerFactory(f)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	w.upstream, w.ours = p, ours.New(w)
	return w
}

// request is one admission request, in v1 objects defaulted as the server
// defaults them.
type request struct {
	name        string
	op          admission.Operation
	gvr         schema.GroupVersionResource
	subresource string
	obj, old    runtime.Object
}

var (
	podsGVR    = corev1.SchemeGroupVersion.WithResource("pods")
	classesGVR = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")
)

func defaulted(obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	obj = obj.DeepCopyObject()
	legacyscheme.Scheme.Default(obj)
	return obj
}

func toInternal(t testing.TB, obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	gvks, _, err := legacyscheme.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Group: gvks[0].Group, Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatalf("converting %T: %v", obj, err)
	}
	return out
}

func toVersion(t testing.TB, obj runtime.Object, gv schema.GroupVersion) runtime.Object {
	out, err := legacyscheme.Scheme.ConvertToVersion(obj, gv)
	if err != nil {
		t.Fatalf("converting %T: %v", obj, err)
	}
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out
}

// compare sends r through both plugins (Admit, then Validate when
// admitted) and returns upstream's outcome.
func (w *world) compare(t *testing.T, r request) string {
	t.Helper()
	obj, old := defaulted(r.obj), defaulted(r.old)
	kind := schema.GroupVersionKind{}
	name := ""
	if obj != nil {
		gvks, _, _ := legacyscheme.Scheme.ObjectKinds(obj)
		kind = gvks[0]
		name = obj.(interface{ GetName() string }).GetName()
	}
	a := &admission.Attributes{Name: name, Namespace: "ns", Resource: r.gvr, Subresource: r.subresource, Kind: kind,
		Operation: r.op, Object: obj, OldObject: old, Record: admission.NewRecord()}
	if r.gvr == classesGVR {
		a.Namespace = ""
	}
	ourErr := w.ours.Admit(context.Background(), a)
	if ourErr == nil {
		ourErr = w.ours.Validate(context.Background(), a)
	}
	uobj := toInternal(t, obj)
	ua := upadmission.NewAttributesRecord(uobj, toInternal(t, old), kind, a.Namespace, name, r.gvr, r.subresource,
		upadmission.Operation(r.op), nil, false, &user.DefaultInfo{Name: "alice"})
	upErr := w.upstream.Admit(context.Background(), ua, nil)
	if upErr == nil {
		upErr = w.upstream.Validate(context.Background(), ua, nil)
	}
	if got, want := describe(ourErr), describe(upErr); got != want {
		t.Errorf("%s: admitd = %s\n upstream = %s", r.name, got, want)
	}
	if upErr == nil && uobj != nil {
		want := toVersion(t, uobj, kind.GroupVersion())
		if diff := cmp.Diff(want, a.Object); diff != "" {
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
