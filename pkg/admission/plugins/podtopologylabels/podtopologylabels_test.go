package podtopologylabels

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

func node(name string, l map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

func binding(l map[string]string, targetKind, target string) *admission.Attributes {
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: l}, Target: corev1.ObjectReference{Kind: targetKind, Name: target}}
	return admissiontest.Create(b).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "binding").Attributes()
}

func bound(l map[string]string, targetKind, target string) *corev1.Binding {
	return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: l}, Target: corev1.ObjectReference{Kind: targetKind, Name: target}}
}

func pod(l map[string]string, nodeName string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: l}, Spec: corev1.PodSpec{NodeName: nodeName}}
}

func TestAdmit(t *testing.T) {
	zone := map[string]string{"topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1"}
	all := nodes{
		"zoned": node("zoned", map[string]string{"topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1", "topology.kubernetes.io/arbitrary": "x",
			"sub.topology.kubernetes.io/zone": "y", "zone": "z", "kubernetes.io/hostname": "zoned"}),
		"plain": node("plain", map[string]string{"kubernetes.io/hostname": "plain"}),
	}
	p := New(all, true)
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "binding gets zone and region only", Attributes: binding(nil, "Node", "zoned"), WantObject: bound(zone, "Node", "zoned")},
		{Name: "existing topology labels are overwritten, others kept", Attributes: binding(map[string]string{"topology.kubernetes.io/zone": "old", "a": "b"}, "Node", "zoned"),
			WantObject: bound(map[string]string{"topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1", "a": "b"}, "Node", "zoned")},
		{Name: "node without topology labels", Attributes: binding(nil, "Node", "plain"), WantObject: bound(nil, "Node", "plain")},
		{Name: "missing node", Attributes: binding(nil, "Node", "gone"), WantObject: bound(nil, "Node", "gone")},
		{Name: "target not a node", Attributes: binding(nil, "Other", "zoned"), WantObject: bound(nil, "Other", "zoned")},
		{Name: "failing node read", Attributes: binding(nil, "Node", "broken"), WantErr: "cache unavailable"},
		{Name: "pod created on a node", Attributes: admissiontest.Create(pod(map[string]string{"app": "x"}, "zoned")).Attributes(),
			WantObject: pod(map[string]string{"app": "x", "topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1"}, "zoned")},
		{Name: "pod not scheduled", Attributes: admissiontest.Create(pod(nil, "")).Attributes(), WantObject: pod(nil, "")},
		{Name: "pod status subresource ignored", Attributes: admissiontest.Create(pod(nil, "zoned")).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "status").Attributes(),
			WantObject: pod(nil, "zoned")},
		{Name: "pod update not handled", Attributes: admissiontest.Update(pod(nil, "zoned"), pod(nil, "")).Attributes(), WantObject: pod(nil, "zoned")},
	})
	admissiontest.Run(t, New(all, false), []admissiontest.Case{
		{Name: "gate off", Attributes: binding(nil, "Node", "zoned"), WantObject: bound(nil, "Node", "zoned")},
	})
}
