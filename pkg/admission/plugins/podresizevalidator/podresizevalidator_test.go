package podresizevalidator

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// nodes is an ObjectCache of nodes; the node "broken" fails to read.
type nodes map[string]*corev1.Node

func (n nodes) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if name == "broken" {
		return nil, errors.New("cache unavailable")
	}
	if o, ok := n[name]; ok && gvr == nodesResource {
		return o, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (n nodes) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	return nil, errors.New("not used")
}

func node(name, os string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}}}
	if os != "" {
		n.Labels = map[string]string{corev1.LabelOSStable: os}
	}
	return n
}

func pod(nodeName string, gen int64, cpu, mem string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "test-pod", Generation: gen},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}}}
}

func resize(newPod, oldPod *corev1.Pod, sub string) *admission.Attributes {
	return admissiontest.Update(newPod, oldPod).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, sub).Attributes()
}

// cause checks the cause a refusal carries.
func cause(want metav1.CauseType) func(*testing.T, *admission.Attributes, error) {
	return func(t *testing.T, _ *admission.Attributes, err error) {
		var se *apierrors.StatusError
		if !errors.As(err, &se) || se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) != 1 || se.ErrStatus.Details.Causes[0].Type != want {
			t.Errorf("error = %#v, want one cause %s", err, want)
		}
	}
}

func TestValidate(t *testing.T) {
	all := nodes{"linux-node": node("linux-node", "linux"), "windows-node": node("windows-node", "windows"), "unlabelled": node("unlabelled", "")}
	old := func(n string) *corev1.Pod { return pod(n, 1, "1", "1Gi") }
	admissiontest.Run(t, New(all, true), []admissiontest.Case{
		{Name: "cpu resize fits", Attributes: resize(pod("linux-node", 2, "2", "1Gi"), old("linux-node"), "resize")},
		{Name: "memory resize fits", Attributes: resize(pod("linux-node", 2, "1", "2Gi"), old("linux-node"), "resize")},
		{Name: "not the resize subresource", Attributes: resize(pod("linux-node", 2, "10", "1Gi"), old("linux-node"), "")},
		{Name: "generation unchanged", Attributes: resize(pod("linux-node", 1, "10", "1Gi"), old("linux-node"), "resize")},
		{Name: "pod not bound", Attributes: resize(pod("", 2, "10", "1Gi"), old(""), "resize")},
		{Name: "cpu beyond allocatable", Attributes: resize(pod("linux-node", 2, "10", "1Gi"), old("linux-node"), "resize"), WantCode: 403,
			WantErr: `pods "test-pod" is forbidden: node didn't have enough allocatable resources: cpu, requested: 10000, allocatable: 4000`, Check: cause(ReasonNodeCapacity)},
		{Name: "memory beyond allocatable", Attributes: resize(pod("linux-node", 2, "1", "10Gi"), old("linux-node"), "resize"), WantCode: 403,
			WantErr: `pods "test-pod" is forbidden: node didn't have enough allocatable resources: memory, requested: 10737418240, allocatable: 8589934592`},
		{Name: "both beyond allocatable", Attributes: resize(pod("linux-node", 2, "10", "10Gi"), old("linux-node"), "resize"), WantCode: 403,
			WantErr: `pods "test-pod" is forbidden: node didn't have enough allocatable resources: cpu, requested: 10000, allocatable: 4000; memory, requested: 10737418240, allocatable: 8589934592`},
		{Name: "windows node", Attributes: resize(pod("windows-node", 2, "2", "1Gi"), old("windows-node"), "resize"), WantCode: 403,
			WantErr: `pods "test-pod" is forbidden: pod resize is only supported on linux nodes, node "windows-node" is "windows"`, Check: cause(ReasonUnsupportedPlatform)},
		{Name: "node without os label", Attributes: resize(pod("unlabelled", 2, "2", "1Gi"), old("unlabelled"), "resize")},
		{Name: "missing node", Attributes: resize(pod("gone", 2, "2", "1Gi"), old("gone"), "resize"), WantCode: 403,
			WantErr: `pods "test-pod" is forbidden: node "gone" not found`},
		{Name: "failing node read", Attributes: resize(pod("broken", 2, "2", "1Gi"), old("broken"), "resize"), WantCode: 403,
			WantErr: `pods "test-pod" is forbidden: failed to get node "broken": cache unavailable`},
	})
	admissiontest.Run(t, New(all, false), []admissiontest.Case{
		{Name: "gate off", Attributes: resize(pod("linux-node", 2, "10", "1Gi"), old("linux-node"), "resize")},
	})
}
