package node

import (
	"fmt"
	"math/rand/v2"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/auth"
)

// TestDifferentialFanIn is TestDifferential around upstream's index: about
// 200 pods share one secret, configmap, claim, service account and resource
// claim named "bg" (upstream indexes vertices of 200 edges or more), while
// pods come and go across the threshold and the usual generated events run
// beside them. Shared pods reference each "bg" object once: a pod that
// references a widely shared object twice triggers the known difference
// pinned by TestStaleIndexAfterDuplicateReference.
func TestDifferentialFanIn(t *testing.T) {
	const clusters, events = 12, 150
	var n tally
	for seed := range uint64(clusters) {
		g := gen{rand.New(rand.NewPCG(seed, 200))}
		c := comparison{t: t, p: newPair(t), seed: seed}
		w := newWorld()
		shared := map[int]*corev1.Pod{}
		for i := range 195 + g.r.IntN(10) {
			shared[i] = g.sharedPod(i)
			c.p.addPod(shared[i])
		}
		c.p.addPV(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "bg"}, Spec: corev1.PersistentVolumeSpec{
			ClaimRef:               &corev1.ObjectReference{Namespace: "ns1", Name: "bg"},
			PersistentVolumeSource: corev1.PersistentVolumeSource{RBD: &corev1.RBDPersistentVolumeSource{SecretRef: &corev1.SecretReference{Name: "bg-rbd"}}},
		}})
		for range events {
			if g.chance(60) {
				c.log = append(c.log, g.sharedEvent(c.p, shared))
			} else {
				c.log = append(c.log, w.step(g, c.p))
			}
			c.compareShared(&n)
			for range 10 {
				c.compare(g.request(), &n)
			}
		}
	}
	t.Logf("%d requests compared, %d allowed", n.total, n.allowed)
}

// sharedPod is pod i of the fan-in, on one of the nodes.
func (g gen) sharedPod(i int) *corev1.Pod {
	claim := "bg"
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: fmt.Sprintf("bg-%d", i), UID: "u"}, Spec: corev1.PodSpec{
		NodeName:           g.pick(nodeNames),
		ServiceAccountName: "bg",
		Volumes: []corev1.Volume{
			{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "bg"}}},
			{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "bg"}}}},
			{Name: "p", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "bg"}}},
		},
		ResourceClaims: []corev1.PodResourceClaim{{Name: "r", ResourceClaimName: &claim}},
	}}
}

// sharedEvent adds, deletes or moves one pod of the fan-in.
func (g gen) sharedEvent(p *pair, shared map[int]*corev1.Pod) string {
	i := g.r.IntN(210)
	old, ok := shared[i]
	switch {
	case !ok:
		shared[i] = g.sharedPod(i)
		p.addPod(shared[i])
		return fmt.Sprintf("add bg-%d on %s", i, shared[i].Spec.NodeName)
	case g.chance(60):
		p.deletePod(old)
		delete(shared, i)
		return fmt.Sprintf("delete bg-%d", i)
	}
	moved := g.sharedPod(i)
	moved.UID = "moved"
	p.updatePod(old, moved)
	shared[i] = moved
	return fmt.Sprintf("move bg-%d to %s", i, moved.Spec.NodeName)
}

// compareShared asks every node for every "bg" object.
func (c *comparison) compareShared(n *tally) {
	reqs := []auth.Attributes{
		{Verb: "get", Resource: "secrets", Namespace: "ns1", Name: "bg"},
		{Verb: "get", Resource: "secrets", Namespace: "ns1", Name: "bg-rbd"},
		{Verb: "get", Resource: "configmaps", Namespace: "ns1", Name: "bg"},
		{Verb: "get", Resource: "persistentvolumeclaims", Namespace: "ns1", Name: "bg"},
		{Verb: "get", Resource: "persistentvolumes", Name: "bg"},
		{Verb: "create", Resource: "serviceaccounts", Subresource: "token", Namespace: "ns1", Name: "bg"},
		{Verb: "get", APIGroup: "resource.k8s.io", Resource: "resourceclaims", Namespace: "ns1", Name: "bg"},
	}
	for _, node := range nodeNames {
		for _, a := range reqs {
			a.User = authenticationv1.UserInfo{Username: "system:node:" + node, Groups: []string{"system:nodes"}}
			a.ResourceRequest = true
			c.compare(a, n)
		}
	}
}
