package node

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/internal/auth"
)

// benchmarkDecision times one decision for node "n0" while unrelated pods,
// each with its own secret and claim, the pull secret "common" and the
// service account "default", run on 100 other nodes. secret is the secret
// read: "mine" (allowed) or "common" (not used on n0, so refused).
func benchmarkDecision(b *testing.B, unrelated int, secret string, want auth.Decision) {
	g := NewGraph(nil)
	for i := range unrelated {
		g.AddPod(newPod("ns", fmt.Sprintf("p%d", i), fmt.Sprintf("n%d", 1+i%100),
			withSecretVolume(fmt.Sprintf("s%d", i)), withPVC(fmt.Sprintf("c%d", i)), withServiceAccount("default"),
			func(p *corev1.Pod) { p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "common"}} }))
	}
	g.AddPod(newPod("ns", "mine", "n0", withSecretVolume("mine"), withServiceAccount("default")))
	a := newAuthorizer(b, g)
	at := attrs("n0", "get", "", "secrets", "", "ns", secret)
	ctx := context.Background()
	for b.Loop() {
		if d, _, _ := a.Authorize(ctx, at); d != want {
			b.Fatalf("decision %v, want %v", d, want)
		}
	}
}

func BenchmarkDecision_10UnrelatedPods(b *testing.B) {
	benchmarkDecision(b, 10, "mine", auth.DecisionAllow)
}

func BenchmarkDecision_10000UnrelatedPods(b *testing.B) {
	benchmarkDecision(b, 10000, "mine", auth.DecisionAllow)
}

func BenchmarkDecisionDenied_10UnrelatedPods(b *testing.B) {
	benchmarkDecision(b, 10, "common", auth.DecisionNoOpinion)
}

func BenchmarkDecisionDenied_10000UnrelatedPods(b *testing.B) {
	benchmarkDecision(b, 10000, "common", auth.DecisionNoOpinion)
}
