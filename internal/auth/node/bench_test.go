package node

import (
	"fmt"
	"testing"

	"github.com/admitd/admitd/internal/auth"
)

// benchmarkDecision times one allowed secret read by node "n0" while
// unrelated pods, each with its own secret, claim and service account, run
// on 100 other nodes.
func benchmarkDecision(b *testing.B, unrelated int) {
	g := NewGraph()
	for i := range unrelated {
		g.AddPod(newPod("ns", fmt.Sprintf("p%d", i), fmt.Sprintf("n%d", 1+i%100),
			withSecretVolume(fmt.Sprintf("s%d", i)), withPVC(fmt.Sprintf("c%d", i)), withServiceAccount("default")))
	}
	g.AddPod(newPod("ns", "mine", "n0", withSecretVolume("mine"), withServiceAccount("default")))
	a := newAuthorizer(b, g)
	at := attrs("n0", "get", "", "secrets", "", "ns", "mine")
	b.ResetTimer()
	for b.Loop() {
		if d, _ := decide(b, a, at); d != auth.DecisionAllow {
			b.Fatalf("decision %v, want allow", d)
		}
	}
}

func BenchmarkDecision_10UnrelatedPods(b *testing.B)    { benchmarkDecision(b, 10) }
func BenchmarkDecision_10000UnrelatedPods(b *testing.B) { benchmarkDecision(b, 10000) }
