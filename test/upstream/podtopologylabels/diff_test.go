// Package podtopologylabels compares pkg/admission/plugins/podtopologylabels
// with upstream's plugin/pkg/admission/podtopologylabels: decisions, errors
// and the mutated Pod or Binding, over upstream's test table and generated
// nodes, pods and bindings, with the gate on and off.
package podtopologylabels

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/podtopologylabels"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/podtopologylabels"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

const zone, region = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"

type pair struct {
	up   *upstream.Plugin
	ours *ours.Plugin
}

func newPair(t *testing.T, nodes []*corev1.Node, enabled bool) pair {
	up := upstream.NewPodTopologyPlugin(upstream.Config{Labels: []string{zone, region}})
	up.InspectFeatureGates(updiff.Gates{kubefeatures.PodTopologyLabelsAdmission: enabled}.FeatureGate())
	updiff.NodeInformers(t, nodes, func(f informers.SharedInformerFactory) { up.SetExternalKubeInformerFactory(f) })
	if err := up.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	return pair{up: up, ours: ours.New(updiff.Nodes(nodes), enabled)}
}

// compare runs a through both plugins and compares outcome and object.
func (p pair) compare(t *testing.T, name string, a *admission.Attributes) {
	t.Helper()
	ua := updiff.Attributes(t, a)
	var upErr, ourErr error
	if p.up.Handles(ua.GetOperation()) {
		upErr = p.up.Admit(context.Background(), ua, nil)
	}
	if p.ours.Handles(a.Operation) {
		ourErr = p.ours.Admit(context.Background(), a)
	}
	if u, o := updiff.OutcomeOf(upErr), updiff.OutcomeOf(ourErr); u != o {
		t.Errorf("%s: upstream %v, admitd %v", name, u, o)
	}
	if a.Object == nil {
		return
	}
	got := a.Object.DeepCopyObject()
	want := got.DeepCopyObject()
	updiff.ToVersion(t, ua.GetObject(), want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: object (-upstream +admitd):\n%s", name, d)
	}
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func bindingCreate(labels map[string]string, kind, node string) *admission.Attributes {
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: labels}, Target: corev1.ObjectReference{Kind: kind, Name: node}}
	return admissiontest.Create(b).Resource(podsGVR, "binding").Attributes()
}

func podCreate(labels map[string]string, node, sub string) *admission.Attributes {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	return admissiontest.Create(p).Resource(podsGVR, sub).Attributes()
}

func node(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// TestUpstreamTable is upstream's TestPodTopologyLabels, each case through
// a pods/binding create and a pod create on the node.
func TestUpstreamTable(t *testing.T) {
	cases := []struct {
		name          string
		nodeLabels    map[string]string
		bindingLabels map[string]string
		disabled      bool
	}{
		{"copies zone and region", map[string]string{zone: "z", region: "r", "topology.k8s.io/other": "x"}, nil, false},
		{"does not copy arbitrary topology labels", map[string]string{"topology.kubernetes.io/arbitrary": "x"}, nil, false},
		{"does not copy subdomain labels", map[string]string{"sub.topology.kubernetes.io/zone": "x"}, nil, false},
		{"does not copy keys without a slash", map[string]string{"zone": "x"}, map[string]string{}, false},
		{"overwrites existing topology labels", map[string]string{zone: "new"}, map[string]string{zone: "old", "x": "y"}, false},
		{"gate disabled", map[string]string{zone: "z"}, map[string]string{}, true},
	}
	for _, tc := range cases {
		p := newPair(t, []*corev1.Node{node("n", tc.nodeLabels)}, !tc.disabled)
		p.compare(t, tc.name+" (binding)", bindingCreate(tc.bindingLabels, "Node", "n"))
		p.compare(t, tc.name+" (pod)", podCreate(tc.bindingLabels, "n", ""))
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	labelSets := []map[string]string{
		nil, {}, {zone: "z1"}, {region: "r1"}, {zone: "z1", region: "r1", "kubernetes.io/hostname": "h"},
		{"topology.kubernetes.io/zone-x": "q", zone: ""}, {"a": "b", region: "r2"},
	}
	n := 0
	for _, enabled := range []bool{true, false} {
		var nodes []*corev1.Node
		for i := 0; i < 6; i++ {
			nodes = append(nodes, node(fmt.Sprintf("n%d", i), labelSets[rng.Intn(len(labelSets))]))
		}
		p := newPair(t, nodes, enabled)
		names := []string{"n0", "n1", "n2", "n3", "n4", "n5", "missing", ""}
		for i := 0; i < 600; i++ {
			labels := labelSets[rng.Intn(len(labelSets))]
			if labels != nil {
				c := map[string]string{}
				for k, v := range labels {
					c[k] = v + "-pod"
				}
				labels = c
			}
			nodeName := names[rng.Intn(len(names))]
			var a *admission.Attributes
			switch rng.Intn(6) {
			case 0, 1:
				a = bindingCreate(labels, []string{"Node", "Node", "Pod", ""}[rng.Intn(4)], nodeName)
			case 2, 3:
				a = podCreate(labels, nodeName, "")
			case 4:
				a = podCreate(labels, nodeName, []string{"status", "ephemeralcontainers"}[rng.Intn(2)])
			default:
				old := podCreate(nil, nodeName, "").Object
				a = admissiontest.Update(podCreate(labels, nodeName, "").Object, old).Attributes()
			}
			p.compare(t, fmt.Sprintf("generated %d (gate %v)", i, enabled), a)
			n++
		}
	}
	t.Logf("%d requests compared", n)
}

var _ runtime.Object = (*corev1.Binding)(nil)
var _ upadmission.MutationInterface = (*upstream.Plugin)(nil)
