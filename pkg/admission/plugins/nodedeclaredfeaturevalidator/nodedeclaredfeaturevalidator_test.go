package nodedeclaredfeaturevalidator

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// nodes is an ObjectCache of nodes; the node "broken" fails to read.
type nodes []*corev1.Node

func (n nodes) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if name == "broken" {
		return nil, errors.New("cache unavailable")
	}
	for _, o := range n {
		if o.Name == name && gvr == nodesResource {
			return o, nil
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (n nodes) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, o := range n {
		out = append(out, o)
	}
	return out, nil
}

func node(name string, labels map[string]string, declared ...string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: corev1.NodeStatus{DeclaredFeatures: declared}}
}

func pod(nodeName string, gen int64, cpu string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", Generation: gen},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c"}}}}
	if cpu != "" {
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	return p
}

func update(newPod, oldPod *corev1.Pod, sub string) *admission.Attributes {
	return admissiontest.Update(newPod, oldPod).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, sub).Attributes()
}

const podLevel = "InPlacePodLevelResourcesVerticalScaling"

func TestPods(t *testing.T) {
	all := nodes{node("old", nil), node("new", nil, podLevel)}
	p := New(Options{Nodes: all, Enabled: true})
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "pod-level resize on a node without the feature", Attributes: update(pod("old", 2, "2"), pod("old", 1, "1"), "resize"), WantCode: 403,
			WantErr: `pods "p" is forbidden: pod update requires features InPlacePodLevelResourcesVerticalScaling which are not available on node "old"`},
		{Name: "through the main resource too", Attributes: update(pod("old", 2, "2"), pod("old", 1, "1"), ""), WantCode: 403,
			WantErr: `pods "p" is forbidden: pod update requires features InPlacePodLevelResourcesVerticalScaling which are not available on node "old"`},
		{Name: "node declares the feature", Attributes: update(pod("new", 2, "2"), pod("new", 1, "1"), "resize")},
		{Name: "status subresource ignored", Attributes: update(pod("old", 2, "2"), pod("old", 1, "1"), "status")},
		{Name: "generation unchanged", Attributes: update(pod("old", 1, "2"), pod("old", 1, "1"), "resize")},
		{Name: "unbound pod", Attributes: update(pod("", 2, "2"), pod("", 1, "1"), "resize")},
		{Name: "no requirement", Attributes: update(pod("gone", 2, ""), pod("gone", 1, ""), "resize")},
		{Name: "missing node", Attributes: update(pod("gone", 2, "2"), pod("gone", 1, "1"), "resize"), WantCode: 403,
			WantErr: `pods "p" is forbidden: node "gone" not found`},
		{Name: "failing node read", Attributes: update(pod("broken", 2, "2"), pod("broken", 1, "1"), "resize"), WantCode: 403,
			WantErr: `pods "p" is forbidden: failed to get node "broken": cache unavailable`},
	})
	admissiontest.Run(t, New(Options{Nodes: all}), []admissiontest.Case{
		{Name: "gate off", Attributes: update(pod("old", 2, "2"), pod("old", 1, "1"), "resize")},
	})
}

func slice(spec resourcev1.ResourceSliceSpec) *admission.Attributes {
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: spec}
	return admissiontest.Create(s).Resource(schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"}, "").Attributes()
}

func TestResourceSlices(t *testing.T) {
	const dra = "DRANodeAllocatableResources"
	all := nodes{node("a", map[string]string{"pool": "x"}, dra), node("b", map[string]string{"pool": "y"})}
	mapped := map[corev1.ResourceName]resourcev1.NodeAllocatableResource{"cpu": {}}
	dev := func(name string) resourcev1.Device {
		return resourcev1.Device{Name: name, NodeAllocatableResources: mapped}
	}
	pool := func(v string) *corev1.NodeSelector {
		return &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{v}}}}}}
	}
	p := New(Options{Nodes: all, Enabled: true, DRANodeAllocatableResources: true})
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "node declares", Attributes: slice(resourcev1.ResourceSliceSpec{NodeName: ptr.To("a"), Devices: []resourcev1.Device{dev("d")}})},
		{Name: "node does not declare", Attributes: slice(resourcev1.ResourceSliceSpec{NodeName: ptr.To("b"), Devices: []resourcev1.Device{dev("d")}}), WantCode: 403,
			WantErr: `resourceslices.resource.k8s.io "s" is forbidden: node "b" does not support DRANodeAllocatableResources feature`},
		{Name: "device without mapping", Attributes: slice(resourcev1.ResourceSliceSpec{NodeName: ptr.To("b"), Devices: []resourcev1.Device{{Name: "d"}}})},
		{Name: "missing node", Attributes: slice(resourcev1.ResourceSliceSpec{NodeName: ptr.To("c"), Devices: []resourcev1.Device{dev("d")}}), WantCode: 403,
			WantErr: `resourceslices.resource.k8s.io "s" is forbidden: node "c" not found for device "d"`},
		{Name: "selector matching a declaring node", Attributes: slice(resourcev1.ResourceSliceSpec{NodeSelector: pool("x"), Devices: []resourcev1.Device{dev("d")}})},
		{Name: "selector matching another", Attributes: slice(resourcev1.ResourceSliceSpec{NodeSelector: pool("y"), Devices: []resourcev1.Device{dev("d")}}), WantCode: 403,
			WantErr: `resourceslices.resource.k8s.io "s" is forbidden: node "b" does not support DRANodeAllocatableResources feature`},
		{Name: "all nodes", Attributes: slice(resourcev1.ResourceSliceSpec{AllNodes: ptr.To(true), Devices: []resourcev1.Device{dev("d")}}), WantCode: 403,
			WantErr: `resourceslices.resource.k8s.io "s" is forbidden: node "b" does not support DRANodeAllocatableResources feature`},
		{Name: "per device", Attributes: slice(resourcev1.ResourceSliceSpec{PerDeviceNodeSelection: ptr.To(true), Devices: []resourcev1.Device{
			{Name: "d1", NodeName: ptr.To("a"), NodeAllocatableResources: mapped}, {Name: "d2", NodeAllocatableResources: mapped}}}), WantCode: 403,
			WantErr: `resourceslices.resource.k8s.io "s" is forbidden: device "d2" in ResourceSlice has NodeAllocatableResources but does not map to any nodes`},
	})
	admissiontest.Run(t, New(Options{Nodes: all, Enabled: true}), []admissiontest.Case{
		{Name: "DRA gate off", Attributes: slice(resourcev1.ResourceSliceSpec{NodeName: ptr.To("b"), Devices: []resourcev1.Device{dev("d")}})},
	})
}
