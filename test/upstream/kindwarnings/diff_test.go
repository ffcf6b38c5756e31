package kindwarnings

import (
	"math/rand"
	"testing"
)

// writesPerKind is how many creates, and as many updates, each kind gets.
const writesPerKind = 1500

// TestGeneratedWarningsLikeUpstream: generated objects of every kind that
// warns upstream, created and updated (over another generated object or
// the same one) through the main resource or /status, warn as upstream's
// strategies, in the same order.
func TestGeneratedWarningsLikeUpstream(t *testing.T) {
	r := rand.New(rand.NewSource(37))
	g := gen{r}
	c := newComparer(t)
	for _, k := range kinds {
		for i := 0; i < writesPerKind && !t.Failed(); i++ {
			old := k.gen(g)
			if k.create != nil {
				c.compare(k, old, nil)
			}
			obj := old.DeepCopyObject()
			if r.Intn(4) > 0 {
				obj = k.gen(g)
			}
			c.compare(k, obj, old)
		}
		t.Logf("%s: %d writes, %d warned", k.name, c.compared[k.name], c.warned[k.name])
		if c.warned[k.name] < c.compared[k.name]/10 {
			t.Errorf("%s: %d of %d writes warned: the generator no longer reaches the warnings", k.name, c.warned[k.name], c.compared[k.name])
		}
	}
	t.Logf("%d distinct warnings (numbers aside)", len(c.distinct))
}
