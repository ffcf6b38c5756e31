// Package podresizevalidator compares pkg/admission/plugins/podresizevalidator
// with upstream's plugin/pkg/admission/podresize: decisions, messages,
// status codes and causes over upstream's test table and generated nodes
// and resizes, with the gate on and off.
package podresizevalidator

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/podresize"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/podresizevalidator"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

type pair struct {
	up   *upstream.Plugin
	ours *ours.Plugin
}

func newPair(t *testing.T, nodes []*corev1.Node, enabled bool) pair {
	up, err := upstream.NewPlugin()
	if err != nil {
		t.Fatal(err)
	}
	up.InspectFeatureGates(updiff.Gates{kubefeatures.InPlacePodVerticalScaling: enabled}.FeatureGate())
	updiff.NodeInformers(t, nodes, func(f informers.SharedInformerFactory) { up.SetExternalKubeInformerFactory(f) })
	if err := up.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	return pair{up: up, ours: ours.New(updiff.Nodes(nodes), enabled)}
}

func (p pair) compare(t *testing.T, name string, a *admission.Attributes) bool {
	t.Helper()
	ua := updiff.Attributes(t, a)
	var upErr, ourErr error
	if p.up.Handles(ua.GetOperation()) {
		upErr = p.up.Validate(context.Background(), ua, nil)
	}
	if p.ours.Handles(a.Operation) {
		ourErr = p.ours.Validate(context.Background(), a)
	}
	u, o := updiff.OutcomeOf(upErr), updiff.OutcomeOf(ourErr)
	if u != o {
		t.Errorf("%s: upstream %v, admitd %v", name, u, o)
	}
	return !u.Allowed
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func node(name, os, cpu, mem string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{}}}
	if os != "" {
		n.Labels = map[string]string{corev1.LabelOSStable: os}
	}
	if cpu != "" {
		n.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		n.Status.Allocatable[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return n
}

func pod(nodeName string, gen int64, cpu, mem string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "test-pod", Generation: gen},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}}}
}

func update(newPod, oldPod *corev1.Pod, sub string) *admission.Attributes {
	return admissiontest.Update(newPod, oldPod).Resource(podsGVR, sub).Attributes()
}

// TestUpstreamTable is upstream's TestPodResizeAdmission.
func TestUpstreamTable(t *testing.T) {
	nodes := []*corev1.Node{node("linux-node", "linux", "4", "8Gi"), node("windows-node", "windows", "4", "8Gi")}
	old := pod("linux-node", 1, "1", "1Gi")
	for _, enabled := range []bool{true, false} {
		p := newPair(t, nodes, enabled)
		for _, tc := range []struct {
			name string
			a    *admission.Attributes
		}{
			{"cpu resize", update(pod("linux-node", 2, "2", "1Gi"), old, "resize")},
			{"memory resize", update(pod("linux-node", 2, "1", "2Gi"), old, "resize")},
			{"not resize subresource", update(pod("linux-node", 2, "10", "1Gi"), old, "")},
			{"generation unchanged", update(pod("linux-node", 1, "10", "1Gi"), old, "")},
			{"not bound", update(pod("", 2, "10", "1Gi"), pod("", 1, "1", "1Gi"), "resize")},
			{"cpu exceeded", update(pod("linux-node", 2, "10", "1Gi"), old, "resize")},
			{"memory exceeded", update(pod("linux-node", 2, "1", "10Gi"), old, "resize")},
			{"both exceeded", update(pod("linux-node", 2, "10", "10Gi"), old, "resize")},
			{"windows node", update(pod("windows-node", 2, "2", "1Gi"), pod("windows-node", 1, "1", "1Gi"), "resize")},
			{"missing node", update(pod("non-existent-node", 2, "2", "1Gi"), pod("non-existent-node", 1, "1", "1Gi"), "resize")},
		} {
			p.compare(t, fmt.Sprintf("%s (gate %v)", tc.name, enabled), tc.a)
		}
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	quantities := []string{"", "0", "100m", "1", "1500m", "2", "4", "64"}
	memories := []string{"", "0", "1Mi", "512Mi", "1Gi", "2G", "8Gi", "100Gi"}
	n, refused := 0, 0
	for _, enabled := range []bool{true, false} {
		var nodes []*corev1.Node
		for i := 0; i < 8; i++ {
			nodes = append(nodes, node(fmt.Sprintf("n%d", i), pick("", "linux", "linux", "windows", "Linux"), pick(quantities...), pick(memories...)))
		}
		p := newPair(t, nodes, enabled)
		for i := 0; i < 1500; i++ {
			nodeName := pick("n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "gone", "")
			newPod := randomPod(rng, nodeName, pick)
			oldPod := randomPod(rng, nodeName, pick)
			newPod.Generation = int64(1 + rng.Intn(2))
			oldPod.Generation = 1
			a := update(newPod, oldPod, pick("resize", "resize", "resize", "", "status"))
			if rng.Intn(10) == 0 {
				a = admissiontest.Create(newPod).Resource(podsGVR, "resize").Attributes()
			}
			if p.compare(t, fmt.Sprintf("generated %d (gate %v)", i, enabled), a) {
				refused++
			}
			n++
		}
	}
	t.Logf("%d requests compared, %d refused", n, refused)
}

func randomPod(rng *rand.Rand, nodeName string, pick func(...string) string) *corev1.Pod {
	res := func() corev1.ResourceRequirements {
		r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}}
		if q := pick("", "100m", "1", "2", "3", "5"); q != "" {
			r.Requests[corev1.ResourceCPU] = resource.MustParse(q)
		}
		if q := pick("", "100Mi", "1Gi", "4Gi", "9Gi"); q != "" {
			r.Requests[corev1.ResourceMemory] = resource.MustParse(q)
		}
		return r
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}, Spec: corev1.PodSpec{NodeName: nodeName}}
	for i := 0; i < 1+rng.Intn(3); i++ {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i), Resources: res()})
	}
	if rng.Intn(3) == 0 {
		c := corev1.Container{Name: "init", Resources: res()}
		if rng.Intn(2) == 0 {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	if rng.Intn(5) == 0 {
		r := res()
		p.Spec.Resources = &r
	}
	if rng.Intn(6) == 0 {
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
	}
	return p
}
