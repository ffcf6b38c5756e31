package node

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// reach is one expectation: node may (or may not) reach an object.
type reach struct {
	node string
	ref  ref
	want bool
}

func check(t *testing.T, g *Graph, step string, rs ...reach) {
	t.Helper()
	for _, r := range rs {
		if got := g.reachable(r.node, r.ref); got != r.want {
			t.Errorf("%s: reachable(%s, %+v) = %v, want %v", step, r.node, r.ref, got, r.want)
		}
	}
	checkInvariants(t, g)
}

// checkInvariants recomputes the per-node counts from the pods and compares.
func checkInvariants(t *testing.T, g *Graph) {
	t.Helper()
	want := map[string]map[ref]int{}
	for _, p := range g.pods {
		if want[p.node] == nil {
			want[p.node] = map[ref]int{}
		}
		for _, r := range p.refs {
			want[p.node][r]++
		}
	}
	for node, counts := range want {
		if len(counts) == 0 {
			delete(want, node)
		}
	}
	if fmt.Sprint(want) != fmt.Sprint(g.uses) {
		t.Errorf("uses = %v, recomputed from pods %v", g.uses, want)
	}
	for s, pvs := range g.pvsBySecret {
		for pv := range pvs {
			if !containsRef(g.pvs[pv].secrets, s) {
				t.Errorf("pvsBySecret[%v] lists %s, which does not name it", s, pv)
			}
		}
	}
}

func secret(ns, name string) ref { return ref{kindSecret, ns, name} }

func TestDeletedPodRemovesEdges(t *testing.T) {
	g := NewGraph(nil)
	p := newPod("ns", "p", "n1", withSecretVolume("s"), withPVC("c"), withServiceAccount("sa"))
	g.AddPod(p)
	check(t, g, "added", reach{"n1", secret("ns", "s"), true}, reach{"n1", ref{kindServiceAccount, "ns", "sa"}, true})
	g.DeletePod(p)
	check(t, g, "deleted", reach{"n1", secret("ns", "s"), false}, reach{"n1", ref{kindPVC, "ns", "c"}, false},
		reach{"n1", ref{kindPod, "ns", "p"}, false})
}

func TestSharedSecretRefcounted(t *testing.T) {
	g := NewGraph(nil)
	a := newPod("ns", "a", "n1", withSecretVolume("s"))
	b := newPod("ns", "b", "n1", withSecretVolume("s"), func(p *corev1.Pod) {
		p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "s"}} // twice in one pod
	})
	g.AddPod(a)
	g.AddPod(b)
	g.DeletePod(a)
	check(t, g, "one of two deleted", reach{"n1", secret("ns", "s"), true})
	g.DeletePod(b)
	check(t, g, "both deleted", reach{"n1", secret("ns", "s"), false})
}

func TestPodMovesNodes(t *testing.T) {
	g := NewGraph(nil)
	p := newPod("ns", "p", "n1", withSecretVolume("s"))
	g.AddPod(p)
	moved := newPod("ns", "p", "n2", withSecretVolume("s"))
	g.UpdatePod(p, moved)
	check(t, g, "moved", reach{"n1", secret("ns", "s"), false}, reach{"n2", secret("ns", "s"), true},
		reach{"n2", ref{kindPod, "ns", "p"}, true})
	// An update that only unbinds the pod is ignored, as upstream.
	g.UpdatePod(moved, newPod("ns", "p", "", withSecretVolume("s")))
	check(t, g, "unbound", reach{"n2", secret("ns", "s"), true})
}

func TestUpdatePodOnlyWhenReferencesMayChange(t *testing.T) {
	g := NewGraph(nil)
	p := newPod("ns", "p", "n1", withSecretVolume("s"))
	g.AddPod(p)
	// Same node and uid: the spec of a bound pod is immutable, so the new
	// secret is not read.
	g.UpdatePod(p, newPod("ns", "p", "n1", withSecretVolume("other")))
	check(t, g, "same uid", reach{"n1", secret("ns", "other"), false}, reach{"n1", secret("ns", "s"), true})
	// A new ephemeral container is read.
	eph := newPod("ns", "p", "n1", withSecretVolume("s"), func(p *corev1.Pod) {
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debug", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "debug"}}}}}}}
	})
	g.UpdatePod(p, eph)
	check(t, g, "ephemeral", reach{"n1", secret("ns", "debug"), true})
	// A new uid (the pod was recreated) is read.
	recreated := newPod("ns", "p", "n1", withSecretVolume("other"), func(p *corev1.Pod) { p.UID = types.UID("new") })
	g.UpdatePod(eph, recreated)
	check(t, g, "recreated", reach{"n1", secret("ns", "other"), true}, reach{"n1", secret("ns", "s"), false})
}

func TestMirrorPodGrantsNothing(t *testing.T) {
	g := NewGraph(nil)
	g.AddPod(newPod("ns", "m", "n1", withSecretVolume("s"), withServiceAccount("sa"), func(p *corev1.Pod) {
		p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	}))
	check(t, g, "mirror", reach{"n1", ref{kindPod, "ns", "m"}, true}, reach{"n1", secret("ns", "s"), false},
		reach{"n1", ref{kindServiceAccount, "ns", "sa"}, false})
}

func TestPVSecrets(t *testing.T) {
	g := NewGraph(nil)
	g.AddPod(newPod("ns", "p", "n1", withPVC("c")))
	withRBD := func(pv *corev1.PersistentVolume) {
		pv.Spec.RBD = &corev1.RBDPersistentVolumeSource{SecretRef: &corev1.SecretReference{Name: "rbd"}}
	}
	pv := newPV("pv", "ns", "c", withRBD)
	g.AddPV(pv)
	check(t, g, "bound", reach{"n1", ref{kindPV, "", "pv"}, true}, reach{"n1", secret("ns", "rbd"), true},
		reach{"n2", secret("ns", "rbd"), false})
	g.UpdatePV(pv, newPV("pv", "", "", withRBD))
	check(t, g, "unbound", reach{"n1", ref{kindPV, "", "pv"}, false}, reach{"n1", secret("ns", "rbd"), false})
	g.AddPV(pv)
	g.DeletePV(pv)
	check(t, g, "deleted", reach{"n1", secret("ns", "rbd"), false})
}

func TestEphemeralVolumeClaim(t *testing.T) {
	g := NewGraph(nil)
	g.AddPod(newPod("ns", "p", "n1", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}}}
	}))
	check(t, g, "ephemeral", reach{"n1", ref{kindPVC, "ns", "p-scratch"}, true})
}

func TestConcurrentUse(t *testing.T) {
	g := NewGraph(nil)
	a := newAuthorizer(t, g)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				p := newPod("ns", fmt.Sprintf("p%d-%d", w, i%10), fmt.Sprintf("n%d", i%3), withSecretVolume("s"))
				g.AddPod(p)
				decide(t, a, attrs("n1", "get", "", "secrets", "", "ns", "s"))
				g.DeletePod(p)
			}
		})
	}
	wg.Wait()
	check(t, g, "all deleted", reach{"n1", secret("ns", "s"), false})
}
