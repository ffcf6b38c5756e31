// Package nodedeclaredfeaturevalidator compares
// pkg/admission/plugins/nodedeclaredfeaturevalidator with upstream's
// plugin/pkg/admission/nodedeclaredfeatures: decisions, messages and status
// codes over generated pod updates (pod-level, init-container and
// memory-volume resizes) and ResourceSlices, against nodes declaring random
// features, with the gates on and off.
package nodedeclaredfeaturevalidator

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/informers"
	basever "k8s.io/component-base/version"
	ndffeatures "k8s.io/component-helpers/nodedeclaredfeatures/features"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/nodedeclaredfeatures"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/nodedeclaredfeaturevalidator"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

type pair struct {
	up   *upstream.Plugin
	ours *ours.Plugin
}

func newPair(t *testing.T, nodes []*corev1.Node, enabled, dra bool) pair {
	up, err := upstream.NewPlugin()
	if err != nil {
		t.Fatal(err)
	}
	up.InspectFeatureGates(updiff.Gates{kubefeatures.NodeDeclaredFeatures: enabled, kubefeatures.DRANodeAllocatableResources: dra}.FeatureGate())
	updiff.NodeInformers(t, nodes, func(f informers.SharedInformerFactory) { up.SetExternalKubeInformerFactory(f) })
	if err := up.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	// Upstream infers for the binary's version (this test binary's).
	v, err := version.Parse(basever.Get().String())
	if err != nil {
		t.Fatal(err)
	}
	return pair{up: up, ours: ours.New(ours.Options{Nodes: updiff.Nodes(nodes), Enabled: enabled, DRANodeAllocatableResources: dra, Version: v})}
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

var (
	podsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	slicesGVR = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"}
)

func featureNames() []string {
	var out []string
	for _, f := range ndffeatures.AllFeatures {
		out = append(out, f.Name())
	}
	return out
}

func TestGeneratedPods(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	names := featureNames()
	n, refused := 0, 0
	for _, enabled := range []bool{true, false} {
		var nodes []*corev1.Node
		for i := 0; i < 6; i++ {
			nd := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)}}
			for _, f := range names {
				if rng.Intn(2) == 0 {
					nd.Status.DeclaredFeatures = append(nd.Status.DeclaredFeatures, f)
				}
			}
			nodes = append(nodes, nd)
		}
		p := newPair(t, nodes, enabled, false)
		for i := 0; i < 1500; i++ {
			nodeName := pick("n0", "n1", "n2", "n3", "n4", "n5", "gone", "")
			shape := podShape{inits: rng.Intn(3), sidecar: rng.Intn(2) == 0, volumes: rng.Intn(3), podLevel: rng.Intn(2) == 0}
			oldPod, newPod := shape.pod(rng, pick, nodeName), shape.pod(rng, pick, nodeName)
			oldPod.Generation, newPod.Generation = 1, int64(1+rng.Intn(3))
			var a *admission.Attributes
			switch rng.Intn(8) {
			case 0:
				a = admissiontest.Create(newPod).Attributes()
			case 1:
				a = admissiontest.Update(newPod, oldPod).Resource(podsGVR, "status").Attributes()
			case 2, 3, 4:
				a = admissiontest.Update(newPod, oldPod).Resource(podsGVR, "resize").Attributes()
			default:
				a = admissiontest.Update(newPod, oldPod).Attributes()
			}
			if p.compare(t, fmt.Sprintf("pod %d (gate %v)", i, enabled), a) {
				refused++
			}
			n++
		}
	}
	t.Logf("%d pod requests compared, %d refused", n, refused)
}

// podShape keeps the parts of old and new pods that an update cannot
// change (how many init containers, which are sidecars, the volumes).
type podShape struct {
	inits, volumes    int
	sidecar, podLevel bool
}

func (s podShape) pod(rng *rand.Rand, pick func(...string) string, nodeName string) *corev1.Pod {
	res := func() corev1.ResourceRequirements {
		var r corev1.ResourceRequirements
		if q := pick("", "100m", "1"); q != "" {
			r.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
		}
		return r
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}, Spec: corev1.PodSpec{NodeName: nodeName,
		Containers: []corev1.Container{{Name: "c", Resources: res()}}}}
	for i := 0; i < s.inits; i++ {
		c := corev1.Container{Name: fmt.Sprintf("i%d", i), Resources: res()}
		if s.sidecar && i == 0 {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	for i := 0; i < s.volumes; i++ {
		v := corev1.Volume{Name: fmt.Sprintf("v%d", i), VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}
		if i == 1 {
			v.EmptyDir.Medium = ""
		}
		if q := pick("", "1Gi", "2Gi"); q != "" {
			v.EmptyDir.SizeLimit = ptr.To(resource.MustParse(q))
		}
		p.Spec.Volumes = append(p.Spec.Volumes, v)
	}
	if s.podLevel {
		r := res()
		p.Spec.Resources = &r
	}
	return p
}

func TestGeneratedResourceSlices(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var nodes []*corev1.Node
	for i := 0; i < 5; i++ {
		nd := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Labels: map[string]string{"pool": fmt.Sprint(i % 2)}}}
		// One node lacks the feature: upstream lists nodes in map order,
		// so with two its message would name either.
		if i != 1 {
			nd.Status.DeclaredFeatures = []string{"DRANodeAllocatableResources"}
		}
		nodes = append(nodes, nd)
	}
	sel := func() *corev1.NodeSelector {
		return &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{fmt.Sprint(rng.Intn(3))}}}}}}
	}
	target := func() (*string, *corev1.NodeSelector, *bool) {
		switch rng.Intn(5) {
		case 0:
			return ptr.To(fmt.Sprintf("n%d", rng.Intn(7))), nil, nil
		case 1:
			return nil, sel(), nil
		case 2:
			return nil, nil, ptr.To(true)
		case 3:
			return ptr.To(""), nil, ptr.To(false)
		}
		return nil, nil, nil
	}
	n, refused := 0, 0
	for _, gates := range [][2]bool{{true, true}, {true, false}, {false, true}} {
		p := newPair(t, nodes, gates[0], gates[1])
		for i := 0; i < 800; i++ {
			s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{Driver: "d", Pool: resourcev1.ResourcePool{Name: "p"}}}
			perDevice := rng.Intn(3) == 0
			if perDevice {
				s.Spec.PerDeviceNodeSelection = ptr.To(true)
			} else {
				s.Spec.NodeName, s.Spec.NodeSelector, s.Spec.AllNodes = target()
			}
			for d := 0; d < rng.Intn(4); d++ {
				dev := resourcev1.Device{Name: fmt.Sprintf("d%d", d)}
				if rng.Intn(3) > 0 {
					dev.NodeAllocatableResources = map[corev1.ResourceName]resourcev1.NodeAllocatableResource{"cpu": {}}
				}
				if perDevice {
					dev.NodeName, dev.NodeSelector, dev.AllNodes = target()
				}
				s.Spec.Devices = append(s.Spec.Devices, dev)
			}
			var a *admission.Attributes
			switch rng.Intn(4) {
			case 0:
				a = admissiontest.Update(s, s.DeepCopy()).Resource(slicesGVR, "").Attributes()
			case 1:
				a = admissiontest.Delete(s).Resource(slicesGVR, "").Attributes()
			default:
				a = admissiontest.Create(s).Resource(slicesGVR, "").Attributes()
			}
			if p.compare(t, fmt.Sprintf("slice %d (gates %v)", i, gates), a) {
				refused++
			}
			n++
		}
	}
	t.Logf("%d slice requests compared, %d refused", n, refused)
}
