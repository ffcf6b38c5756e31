package node

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/admitd/admitd/internal/auth"
)

// benchPair holds one allowed secret read of node "mine" among unrelated
// pods on 100 other nodes, each with its own secret, the pull secret
// "common" and the service account "default".
func benchPair(b *testing.B, unrelated int) (*pair, auth.Attributes) {
	p := newPair(b)
	for i := range unrelated {
		pod := secretPod(fmt.Sprintf("p%d", i), fmt.Sprintf("n%d", i%100))
		pod.Spec.Volumes[0].Secret.SecretName = fmt.Sprintf("s%d", i)
		pod.Spec.ServiceAccountName = "default"
		pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "common"}}
		p.addPod(pod)
	}
	p.addPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "mine"}, Spec: corev1.PodSpec{
		NodeName: "mine", ServiceAccountName: "default",
		Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "mine"}}}},
	}})
	return p, auth.Attributes{User: nodeUser("mine"), Verb: "get", ResourceRequest: true, Resource: "secrets", Namespace: "ns1", Name: "mine"}
}

// denied turns the request into a read of "common", which node "mine" does
// not use.
func denied(a auth.Attributes) auth.Attributes {
	a.Name = "common"
	return a
}

func benchOurs(b *testing.B, unrelated int, want auth.Decision, change func(auth.Attributes) auth.Attributes) {
	p, a := benchPair(b, unrelated)
	a = change(a)
	for b.Loop() {
		if d, _, _ := p.oursAuthz.Authorize(context.Background(), a); d != want {
			b.Fatalf("decision %v", d)
		}
	}
}

func benchUpstream(b *testing.B, unrelated int, want authorizer.Decision, change func(auth.Attributes) auth.Attributes) {
	p, a := benchPair(b, unrelated)
	ua := upstreamAttributes(change(a))
	for b.Loop() {
		if d, _, _ := p.upAuthz.Authorize(context.Background(), ua); d != want {
			b.Fatalf("decision %v", d)
		}
	}
}

func same(a auth.Attributes) auth.Attributes { return a }

func BenchmarkOurs_10UnrelatedPods(b *testing.B) { benchOurs(b, 10, auth.DecisionAllow, same) }
func BenchmarkOurs_10000UnrelatedPods(b *testing.B) {
	benchOurs(b, 10000, auth.DecisionAllow, same)
}
func BenchmarkUpstream_10UnrelatedPods(b *testing.B) {
	benchUpstream(b, 10, authorizer.DecisionAllow, same)
}
func BenchmarkUpstream_10000UnrelatedPods(b *testing.B) {
	benchUpstream(b, 10000, authorizer.DecisionAllow, same)
}

// The Denied benchmarks read a secret that all unrelated pods share: upstream
// searches the edges of that secret (its index is authoritative for
// configmaps and claims, not for secrets, which volumes may also name).
func BenchmarkOursDenied_10UnrelatedPods(b *testing.B) {
	benchOurs(b, 10, auth.DecisionNoOpinion, denied)
}
func BenchmarkOursDenied_10000UnrelatedPods(b *testing.B) {
	benchOurs(b, 10000, auth.DecisionNoOpinion, denied)
}
func BenchmarkUpstreamDenied_10UnrelatedPods(b *testing.B) {
	benchUpstream(b, 10, authorizer.DecisionNoOpinion, denied)
}
func BenchmarkUpstreamDenied_10000UnrelatedPods(b *testing.B) {
	benchUpstream(b, 10000, authorizer.DecisionNoOpinion, denied)
}
