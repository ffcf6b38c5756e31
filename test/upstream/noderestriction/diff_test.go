package noderestriction

import (
	"testing"
)

// users: the node n1, nodes without a name or without the nodes group,
// another node, and a plain user.
var users = []struct {
	name   string
	groups []string
}{
	{"system:node:n1", []string{"system:nodes", "system:authenticated"}},
	{"system:node:n2", []string{"system:nodes"}},
	{"system:node:n3", []string{"system:nodes"}},
	{"system:node:", []string{"system:nodes"}},
	{"system:node:n1", []string{"system:authenticated"}},
	{"alice", []string{"system:nodes"}},
}

// TestSameDecisions runs every generated request as every user through
// both plugins.
func TestSameDecisions(t *testing.T) {
	w := newWorld()
	w.build(t)
	var requests []named
	for _, gen := range [][]named{podCreates(), podWrites(), nodeWrites(), pvcStatusWrites(), tokenRequests(),
		leaseAndCSINodeWrites(), sliceWrites(), csrWrites(t), pcrWrites()} {
		requests = append(requests, gen...)
	}
	outcomes := map[string]int{}
	for _, u := range users {
		for _, r := range requests {
			a := r.b.User(u.name, u.groups...).Attributes()
			outcomes[w.compare(t, u.name+" "+r.name, a)]++
		}
	}
	// The generated requests must keep reaching most of the plugin: a
	// generator that broke would leave few distinct outcomes.
	if len(outcomes) < minOutcomes {
		t.Errorf("%d distinct outcomes, want at least %d", len(outcomes), minOutcomes)
	}
	t.Logf("%d requests compared, %d distinct outcomes", len(requests)*len(users), len(outcomes))
	if testing.Verbose() {
		for o, n := range outcomes {
			t.Logf("%4d %s", n, o)
		}
	}
}

const minOutcomes = 200
