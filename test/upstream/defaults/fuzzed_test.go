package defaults

import (
	"math/rand"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	apitesting "k8s.io/kubernetes/pkg/api/testing"
)

// objectsPerKind is how many fuzzed objects each kind is defaulted on.
const objectsPerKind = 1000

// TestFuzzedDefaultsLikeUpstream: objects of every kind admitd serves, in
// every version, filled at random by upstream's own fuzzer (half of the
// pointers, slices and maps left nil, or most of them in every other one), default as upstream's decoding
// defaults them.
func TestFuzzedDefaultsLikeUpstream(t *testing.T) {
	cat := allVersionsCatalogue(t)
	kinds, byKind := servedKinds(cat)
	filler := fuzzer.FuzzerFor(apitesting.FuzzerFuncs, rand.NewSource(53), legacyscheme.Codecs)
	// Every other object is sparser, leaving more for defaulting to fill.
	sparse := fuzzer.FuzzerFor(apitesting.FuzzerFuncs, rand.NewSource(57), legacyscheme.Codecs).NilChance(.85)
	// A CustomResourceDefinition's schema nests without end.
	shallow := fuzzer.FuzzerFor(apitesting.FuzzerFuncs, rand.NewSource(59), legacyscheme.Codecs).MaxDepth(12)
	compared, differing := 0, 0
	for _, gvk := range kinds {
		res := byKind[gvk]
		start := time.Now()
		mismatches, first := 0, ""
		for i := range objectsPerKind {
			obj, err := upstreamScheme(gvk.Group).New(gvk)
			if err != nil {
				t.Fatalf("%v: %v", gvk, err)
			}
			if gvk.Group == "apiextensions.k8s.io" {
				shallow.Fill(obj)
			} else if i%2 == 1 {
				sparse.Fill(obj)
			} else {
				filler.Fill(obj)
			}
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			if d := difference(res, obj); d != "" {
				if mismatches == 0 {
					first = d
				}
				mismatches++
			}
			compared++
		}
		if testing.Verbose() {
			t.Logf("%v: %v", gvk, time.Since(start))
		}
		if mismatches > 0 {
			differing++
			t.Errorf("%v: %d of %d fuzzed objects default differently; the first (-upstream +admitd):\n%s", gvk, mismatches, objectsPerKind, firstLines(first, 60))
		}
	}
	t.Logf("%d kinds, %d objects compared, %d kinds differ", len(kinds), compared, differing)
	if len(kinds) < 70 {
		t.Errorf("only %d kinds: the catalogue no longer lists the built-in kinds", len(kinds))
	}
}
