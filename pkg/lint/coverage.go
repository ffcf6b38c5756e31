package lint

import (
	"math/bits"
	"strings"

	v1 "k8s.io/api/admissionregistration/v1"
)

// bitset is a set of coverage entries.
type bitset []uint64

// dimension indexes, for one part of a request (operation, group,
// resource or subresource), which entries accept each value.
type dimension struct {
	exact map[string]bitset
	wild  bitset // entries with "*" here
}

func (d *dimension) add(value string, entry, words int) {
	set := d.wild
	if value != "*" {
		if d.exact[value] == nil {
			d.exact[value] = make(bitset, words)
		}
		set = d.exact[value]
	}
	set[entry/64] |= 1 << (entry % 64)
}

// accepts returns the entries accepting v, ANDed into acc.
func (d *dimension) accepts(v string, acc bitset) {
	exact := d.exact[v]
	for i := range acc {
		w := d.wild[i]
		if exact != nil {
			w |= exact[i]
		}
		acc[i] &= w
	}
}

// coverage indexes every resource pattern of every rule of every hook
// (an entry) so that the hooks covering a call are found with four ANDs
// of bitsets rather than by trying every rule.
type coverage struct {
	owner               []int // entry → hook
	words               int
	op, group, res, sub dimension
}

func newCoverage(hooks []hook) *coverage {
	c := &coverage{}
	type entry struct {
		hook          int
		ops, groups   []string
		resource, sub string
	}
	var entries []entry
	for i := range hooks {
		for _, r := range hooks[i].rules {
			for _, p := range r.Resources {
				res, sub, hasSub := strings.Cut(p, "/")
				if !hasSub {
					sub = ""
				}
				entries = append(entries, entry{i, opsOf(r.Operations), r.APIGroups, res, sub})
			}
		}
	}
	c.words = (len(entries) + 63) / 64
	for _, d := range []*dimension{&c.op, &c.group, &c.res, &c.sub} {
		*d = dimension{exact: map[string]bitset{}, wild: make(bitset, c.words)}
	}
	for n, e := range entries {
		c.owner = append(c.owner, e.hook)
		for _, op := range e.ops {
			c.op.add(op, n, c.words)
		}
		for _, g := range e.groups {
			c.group.add(g, n, c.words)
		}
		c.res.add(e.resource, n, c.words)
		c.sub.add(e.sub, n, c.words)
	}
	return c
}

// hooks returns the hooks (of all, indexed as the hooks coverage was
// built from) with a rule that matches call, in order.
func (c *coverage) hooks(call call, all []*hook) []*hook {
	acc := make(bitset, c.words)
	for i := range acc {
		acc[i] = ^uint64(0)
	}
	c.op.accepts(call.op, acc)
	c.group.accepts(call.group, acc)
	c.res.accepts(call.resource, acc)
	c.sub.accepts(call.sub, acc)
	var out []*hook
	last := -1
	for i, w := range acc {
		for w != 0 {
			n := i*64 + bits.TrailingZeros64(w)
			w &= w - 1
			if h := c.owner[n]; h != last {
				out = append(out, all[h])
				last = h
			}
		}
	}
	return out
}

func opsOf(ops []v1.OperationType) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = string(o)
	}
	return out
}
