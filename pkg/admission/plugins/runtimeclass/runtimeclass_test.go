package runtimeclass

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

type classes map[string]*nodev1.RuntimeClass

func (c classes) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if rc, ok := c[name]; ok && gvr == runtimeClasses {
		return rc, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (c classes) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	return nil, nil
}

func resources(cpu, mem string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
}

func podWith(class string, overhead corev1.ResourceList, selector map[string]string, ts ...corev1.Toleration) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{Overhead: overhead, NodeSelector: selector, Tolerations: ts}}
	if class != "" {
		p.Spec.RuntimeClassName = &class
	}
	return p
}

func tol(key string) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
}

var world = classes{
	"ovh":   {ObjectMeta: metav1.ObjectMeta{Name: "ovh"}, Handler: "h", Overhead: &nodev1.Overhead{PodFixed: resources("100m", "20Mi")}},
	"plain": {ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Handler: "h"},
	"sched": {ObjectMeta: metav1.ObjectMeta{Name: "sched"}, Handler: "h", Scheduling: &nodev1.Scheduling{
		NodeSelector: map[string]string{"sandbox": "true", "zone": "a"}, Tolerations: []corev1.Toleration{tol("sandbox"), tol("foo")}}},
	"nilsel": {ObjectMeta: metav1.ObjectMeta{Name: "nilsel"}, Handler: "h", Scheduling: &nodev1.Scheduling{Tolerations: []corev1.Toleration{tol("x")}}},
}

const (
	differs   = `pods "p" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`
	undefined = `pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`
)

func TestAdmitAndValidate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pod, want *corev1.Pod
		admitErr  string
		validErr  string
	}{
		{name: "no class", pod: podWith("", nil, nil), want: podWith("", nil, nil)},
		{name: "no class, overhead set", pod: podWith("", resources("1", "1Mi"), nil), want: podWith("", resources("1", "1Mi"), nil), validErr: undefined},
		{name: "unknown class", pod: podWith("nope", nil, nil), admitErr: `pods "p" is forbidden: pod rejected: RuntimeClass "nope" not found`},
		{name: "overhead set from the class", pod: podWith("ovh", nil, nil), want: podWith("ovh", resources("100m", "20Mi"), nil)},
		{name: "same overhead already set: the class's replaces it", pod: podWith("ovh", resources("0.1", "20Mi"), nil), want: podWith("ovh", resources("100m", "20Mi"), nil)},
		{name: "different overhead", pod: podWith("ovh", resources("1", "20Mi"), nil), admitErr: differs},
		{name: "class without overhead, overhead set", pod: podWith("plain", resources("1", "1Mi"), nil), want: podWith("plain", resources("1", "1Mi"), nil), validErr: undefined},
		{name: "scheduling into a nil selector", pod: podWith("sched", nil, nil),
			want: podWith("sched", nil, map[string]string{"sandbox": "true", "zone": "a"}, tol("sandbox"), tol("foo"))},
		{name: "scheduling, same value", pod: podWith("sched", nil, map[string]string{"sandbox": "true", "disk": "ssd"}, tol("other")),
			want: podWith("sched", nil, map[string]string{"sandbox": "true", "zone": "a", "disk": "ssd"}, tol("other"), tol("sandbox"), tol("foo"))},
		{name: "scheduling conflict", pod: podWith("sched", nil, map[string]string{"sandbox": "false", "zone": "b"}),
			admitErr: `pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false`},
		{name: "class tolerations merged", pod: podWith("sched", nil, nil, corev1.Toleration{Operator: corev1.TolerationOpExists}),
			want: podWith("sched", nil, map[string]string{"sandbox": "true", "zone": "a"}, corev1.Toleration{Operator: corev1.TolerationOpExists})},
		{name: "scheduling without selector", pod: podWith("nilsel", nil, nil), want: podWith("nilsel", nil, nil, tol("x"))},
	} {
		p := New(world)
		a := admissiontest.Create(tc.pod).Attributes()
		err := p.Admit(context.Background(), a)
		if tc.admitErr != "" {
			if err == nil || err.Error() != tc.admitErr {
				t.Errorf("%s: Admit = %v, want %q", tc.name, err, tc.admitErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: Admit = %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(tc.pod, tc.want) {
			t.Errorf("%s: pod = %+v, want %+v", tc.name, tc.pod.Spec, tc.want.Spec)
		}
		err = p.Validate(context.Background(), a)
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.validErr {
				t.Errorf("%s: Validate = %v, want %q", tc.name, err, tc.validErr)
			}
		} else if tc.validErr != "" {
			t.Errorf("%s: Validate = nil, want %q", tc.name, tc.validErr)
		}
	}
	// The cache's objects are never modified.
	if world["sched"].Scheduling.NodeSelector["disk"] != "" || len(world["sched"].Scheduling.Tolerations) != 2 {
		t.Errorf("the cached RuntimeClass was modified: %+v", world["sched"].Scheduling)
	}
}

func TestValidateOverheadDiffers(t *testing.T) {
	p := New(world)
	pod := podWith("ovh", resources("1", "1Mi"), nil)
	if err := p.Validate(context.Background(), admissiontest.Create(pod).Attributes()); err == nil || err.Error() != differs {
		t.Errorf("Validate = %v, want %q", err, differs)
	}
}

func TestHandles(t *testing.T) {
	p := New(world)
	for op, want := range map[admission.Operation]bool{admission.Create: true, admission.Update: false, admission.Delete: false, admission.Connect: false} {
		if got := p.Handles(op); got != want {
			t.Errorf("Handles(%s) = %v, want %v", op, got, want)
		}
	}
}
