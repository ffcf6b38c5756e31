package node

import (
	"fmt"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/auth"
)

// TestStaleIndexAfterDuplicateReference pins the one known difference.
// Upstream keeps a reference-counted index of destination nodes on vertices
// with 200 edges or more; a pod that references the same secret twice
// counts twice there but is subtracted once when deleted, so its node keeps
// reading the secret while 200 other pods still use it. admitd counts each
// reference of a pod once and refuses, as upstream does below the
// threshold.
func TestStaleIndexAfterDuplicateReference(t *testing.T) {
	for _, others := range []int{10, 199, 200, 201, 300} {
		t.Run(fmt.Sprintf("%d other pods", others), func(t *testing.T) {
			p := newPair(t)
			for i := range others {
				p.addPod(secretPod(fmt.Sprintf("other%d", i), "n2"))
			}
			// A pod with no secret keeps n1 in upstream's graph.
			p.addPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "keep"}, Spec: corev1.PodSpec{NodeName: "n1"}})
			twice := secretPod("twice", "n1")
			twice.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "shared"}}
			p.addPod(twice)
			p.deletePod(twice)
			a := auth.Attributes{User: nodeUser("n1"), Verb: "get", ResourceRequest: true, Resource: "secrets", Namespace: "ns1", Name: "shared"}
			ours, theirs := p.decide(t, a)
			want := verdict{int(auth.DecisionNoOpinion), "no relationship found between node 'n1' and this object", false}
			if ours != want {
				t.Errorf("ours = %+v, want %+v", ours, want)
			}
			upstreamWant := want
			if others >= 200 {
				upstreamWant = verdict{decision: int(auth.DecisionAllow)}
			}
			if theirs != upstreamWant {
				t.Errorf("upstream = %+v, want %+v (has upstream's index changed?)", theirs, upstreamWant)
			}
		})
	}
}

func secretPod(name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: name, UID: "u"}, Spec: corev1.PodSpec{
		NodeName: node,
		Volumes:  []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "shared"}}}},
	}}
}

func nodeUser(name string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: "system:node:" + name, Groups: []string{"system:nodes"}}
}
