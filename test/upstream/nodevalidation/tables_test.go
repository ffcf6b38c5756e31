package nodevalidation

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// Targeted writes after the cases of upstream's TestValidateNode,
// TestValidateNodeUpdate, TestValidateRuntimeClass(Update) and
// TestValidateLease(Update): the ratcheting and the declarative rules the
// generated writes meet only by chance.

func nodeMeta() metav1.ObjectMeta { return metav1.ObjectMeta{Name: "n1", ResourceVersion: "1"} }

func nodeWith(edit func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: nodeMeta()}
	edit(n)
	asServed(n)
	return n
}

func targetedNodeWrites() []write {
	plain := nodeWith(func(*corev1.Node) {})
	withPolicy := nodeWith(func(n *corev1.Node) {
		n.Spec.PodPreemptionPolicy = &corev1.NodePodPreemptionPolicy{DisableResizePreemption: []string{"a"}}
	})
	withCIDRs := nodeWith(func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.0.0.0/24", "fd00::/64"}; n.Spec.ProviderID = "p1" })
	withConfig := nodeWith(func(n *corev1.Node) {
		n.Spec.ConfigSource = &corev1.NodeConfigSource{ConfigMap: &corev1.ConfigMapNodeConfigSource{Namespace: "kube-system", Name: "k", KubeletConfigKey: "k"}}
		n.Status.Config = &corev1.NodeConfigStatus{Error: "stored"}
	})
	annotated := func(taints string) *corev1.Node {
		return nodeWith(func(n *corev1.Node) {
			n.Annotations = map[string]string{"scheduler.alpha.kubernetes.io/taints": taints}
		})
	}
	return []write{
		{Name: "taint annotation with a number for a key", Obj: annotated(`[{"key":1,"effect":"NoSchedule"}]`), Defaulted: true},
		{Name: "taint annotation with a bad time", Obj: annotated(`[{"key":"a","effect":"NoSchedule","timeAdded":"yesterday"}]`), Defaulted: true},
		{Name: "taint annotation repeated", Obj: annotated(`[{"key":"a","effect":"NoSchedule"},{"key":"a","effect":"NoSchedule"}]`), Defaulted: true},
		{Name: "podPreemptionPolicy on create is dropped", Obj: withPolicy, Defaulted: true},
		{Name: "podPreemptionPolicy added", Obj: withPolicy, Old: plain, Defaulted: true},
		{Name: "podPreemptionPolicy stored, kept", Obj: withPolicy, Old: withPolicy, Defaulted: true},
		{Name: "podPreemptionPolicy stored, changed", Obj: nodeWith(func(n *corev1.Node) {
			n.Spec.PodPreemptionPolicy = &corev1.NodePodPreemptionPolicy{DisableResizePreemption: []string{"bad key!", "b"}}
		}), Old: withPolicy, Defaulted: true},
		{Name: "podPreemptionPolicy stored, removed", Obj: plain, Old: withPolicy, Defaulted: true},
		{Name: "pod CIDRs and providerID set once", Obj: withCIDRs, Old: plain, Defaulted: true},
		{Name: "pod CIDRs reordered", Obj: nodeWith(func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"fd00::/64", "10.0.0.0/24"}; n.Spec.ProviderID = "p1" }), Old: withCIDRs, Defaulted: true},
		{Name: "config source kept when stored", Obj: withConfig, Old: withConfig, Defaulted: true},
		{Name: "config source added", Obj: withConfig, Old: plain, Defaulted: true},
		{Name: "status config through status, none stored", Obj: withConfig, Old: plain, Status: true, Defaulted: true},
		{Name: "status config through status, stored", Obj: withConfig, Old: withConfig, Status: true, Defaulted: true},
		{Name: "status write of a node with stored bad taints", Obj: withCIDRs, Old: nodeWith(func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "bad key!", Effect: "Bogus"}}
		}), Status: true, Defaulted: true},
	}
}

func runtimeClass(handler string) *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata", ResourceVersion: "1"}, Handler: handler}
}

func targetedRuntimeClassWrites() []write {
	return []write{
		{Name: "handler missing", Obj: runtimeClass("")},
		{Name: "handler too long", Obj: runtimeClass("hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh")},
		{Name: "handler with dots", Obj: runtimeClass("a.b")},
		{Name: "handler changed", Obj: runtimeClass("kata"), Old: runtimeClass("runc")},
		{Name: "handler changed to a bad one", Obj: runtimeClass("Bad_Handler"), Old: runtimeClass("runc")},
		{Name: "handler emptied", Obj: runtimeClass(""), Old: runtimeClass("runc")},
		{Name: "bad stored handler kept", Obj: runtimeClass("Bad_Handler"), Old: runtimeClass("Bad_Handler")},
		{Name: "a comparison operator", Obj: func() *nodev1.RuntimeClass {
			rc := runtimeClass("kata")
			rc.Scheduling = &nodev1.Scheduling{Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpGt, Value: "5"}}}
			return rc
		}()},
		{Name: "repeated tolerations, seconds aside", Obj: func() *nodev1.RuntimeClass {
			rc := runtimeClass("kata")
			rc.Scheduling = &nodev1.Scheduling{Tolerations: []corev1.Toleration{{Key: "k", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr.To(int64(5))},
				{Key: "k", Operator: "Exists", Effect: "NoExecute"}}}
			return rc
		}()},
	}
}

func leaseWith(edit func(*coordinationv1.LeaseSpec)) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: "kube-node-lease", ResourceVersion: "1"}}
	edit(&l.Spec)
	return l
}

func targetedLeaseWrites() []write {
	withStrategy := leaseWith(func(s *coordinationv1.LeaseSpec) {
		s.Strategy, s.PreferredHolder = ptr.To(coordinationv1.CoordinatedLeaseStrategy("Other")), ptr.To("n2")
	})
	return []write{
		{Name: "strategy and holder on create are dropped", Obj: withStrategy},
		{Name: "strategy and holder added", Obj: withStrategy, Old: leaseWith(func(*coordinationv1.LeaseSpec) {})},
		{Name: "stored strategy kept", Obj: withStrategy, Old: withStrategy},
		{Name: "stored strategy emptied, holder kept", Obj: leaseWith(func(s *coordinationv1.LeaseSpec) {
			s.Strategy, s.PreferredHolder = ptr.To(coordinationv1.CoordinatedLeaseStrategy("")), ptr.To("n2")
		}), Old: withStrategy},
		{Name: "zero duration, negative transitions", Obj: leaseWith(func(s *coordinationv1.LeaseSpec) {
			s.LeaseDurationSeconds, s.LeaseTransitions = ptr.To(int32(0)), ptr.To(int32(-1))
		})},
		{Name: "finalizer without a domain", Obj: func() *coordinationv1.Lease {
			l := leaseWith(func(*coordinationv1.LeaseSpec) {})
			l.Finalizers = []string{"cleanup"}
			return l
		}()},
	}
}

func TestTargetedWrites(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	var writes []write
	writes = append(writes, targetedNodeWrites()...)
	writes = append(writes, targetedRuntimeClassWrites()...)
	writes = append(writes, targetedLeaseWrites()...)
	for _, w := range writes {
		for _, obj := range []runtime.Object{w.Obj, w.Old} {
			if obj != nil && obj.(metav1.Object).GetResourceVersion() == "" {
				t.Fatalf("%s: no resourceVersion", w.Name)
			}
		}
		compare(t, cat, w, &c)
	}
	t.Log(c.String())
}
