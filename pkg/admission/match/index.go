package match

import "math"

// grKey is a group/resource pair of a rule; either may be "*".
type grKey struct {
	group, resource string
}

// Index finds, for a request, the criteria that could match it, without
// looking at the others. Criteria are indexed by the (group, resource) pairs
// their rules name, wildcards included; criteria with matchPolicy Equivalent
// are also found through the resources equivalent to the request's. Among
// those, criteria whose namespaceSelector rejects the request's namespace
// are dropped, each distinct selector being evaluated once per request. An
// Index is immutable and safe for concurrent use: build one per
// configuration generation.
//
// The index is conservative: a criteria it does not return cannot match and
// cannot fail (its Match returns a Skip reason, which tracing can ask for).
type Index struct {
	n      int
	always *postings           // criteria every request visits
	exact  map[grKey]*postings // every criteria, by its rules' pairs
	equiv  map[grKey]*postings // Equivalent criteria, by rules and exclude rules
	ns     nsFilter
}

// postings lists criteria positions in increasing order, with a summary of
// their namespaceSelectors.
type postings struct {
	pos []int32
	summary
}

// NewIndex indexes criteria; Candidates returns positions in this slice.
func NewIndex(criteria []*Criteria) *Index {
	ix := &Index{n: len(criteria), always: &postings{},
		exact: map[grKey]*postings{}, equiv: map[grKey]*postings{}}
	for i, c := range criteria {
		pos := int32(i)
		keys := ruleKeys(c.rules)
		var eqKeys []grKey
		if c.equivalent {
			eqKeys = append(ruleKeys(c.exclude), keys...)
		}
		if c.err != nil || c.anyResource || hasAll(keys) || hasAll(eqKeys) {
			ix.always.add(pos)
			continue
		}
		for _, k := range keys {
			postingsFor(ix.exact, k).add(pos)
		}
		for _, k := range eqKeys {
			postingsFor(ix.equiv, k).add(pos)
		}
	}
	ix.ns = newNSFilter(criteria)
	ix.always.summary = ix.ns.summarize(ix.always.pos)
	for _, m := range []map[grKey]*postings{ix.exact, ix.equiv} {
		for _, p := range m {
			p.summary = ix.ns.summarize(p.pos)
		}
	}
	return ix
}

func postingsFor(m map[grKey]*postings, k grKey) *postings {
	p := m[k]
	if p == nil {
		p = &postings{}
		m[k] = p
	}
	return p
}

// add appends pos once (criteria are added in increasing order).
func (p *postings) add(pos int32) {
	if n := len(p.pos); n > 0 && p.pos[n-1] == pos {
		return
	}
	p.pos = append(p.pos, pos)
}

// Len returns the number of indexed criteria.
func (ix *Index) Len() int { return ix.n }

// ruleKeys returns the (group, resource) pairs of rules that can match
// anything at all.
func ruleKeys(rules []rule) []grKey {
	var keys []grKey
	for i := range rules {
		r := &rules[i]
		if r.scope == scopeNone || (!r.anyOp && r.ops == 0 && len(r.otherOps) == 0) ||
			(!r.anyVersion && len(r.versions) == 0) {
			continue
		}
		groups := r.groups
		if r.anyGroup {
			groups = []string{"*"}
		}
		for _, g := range groups {
			for _, p := range r.resources {
				keys = append(keys, grKey{group: g, resource: p.res})
			}
		}
	}
	return keys
}

func hasAll(keys []grKey) bool {
	for _, k := range keys {
		if k.group == "*" && k.resource == "*" {
			return true
		}
	}
	return false
}

// maxLists is the number of posting lists a lookup keeps on the stack;
// more spill to the heap.
const maxLists = 16

// Candidates returns, in configuration order, the positions of the criteria
// that could match the request. It may read the request's namespace (once).
// The result may share memory with the index (read it, never write it) or
// with buf, which is used when lists are merged or filtered; pass buf[:0] of
// a slice kept per goroutine to avoid allocating.
//
// The namespace filter assumes the namespace labels do not change during
// the request, which holds except for a Namespace CREATE or UPDATE, where it
// does not filter: a mutating dispatcher may compute Candidates once.
func (ix *Index) Candidates(r *Request, buf []int32) []int32 {
	lists := make([]*postings, 0, maxLists)
	lists = appendList(lists, ix.always)
	a := r.attrs
	g, res := a.Resource.Group, a.Resource.Resource
	lists = appendList(lists, ix.exact[grKey{g, res}])
	lists = appendList(lists, ix.exact[grKey{g, "*"}])
	lists = appendList(lists, ix.exact[grKey{"*", res}])
	if len(ix.equiv) > 0 {
		lists = ix.appendEquivalents(r, lists)
	}
	if len(lists) == 0 {
		return buf[:0]
	}
	var v verdicts
	lbls, filtering := ix.ns.labels(r)
	mixed := false
	if filtering {
		v.init(len(ix.ns.sels))
		kept := lists[:0]
		for _, p := range lists {
			switch ix.ns.classify(&p.summary, lbls, &v) {
			case allOut:
				continue
			case someOut:
				mixed = true
			}
			kept = append(kept, p)
		}
		lists = kept
	}
	switch {
	case len(lists) == 0:
		return buf[:0]
	case len(lists) == 1 && !mixed:
		return lists[0].pos
	case len(lists) == 1:
		return ix.ns.filter(lists[0].pos, false, buf, lbls, &v)
	case !mixed:
		return merge(lists, buf[:0])
	}
	return ix.ns.filter(merge(lists, buf[:0]), true, nil, lbls, &v)
}

func appendList(lists []*postings, p *postings) []*postings {
	if p == nil || len(p.pos) == 0 {
		return lists
	}
	return append(lists, p)
}

// appendEquivalents appends the posting lists of the distinct
// group/resources of the resources equivalent to the request's.
func (ix *Index) appendEquivalents(r *Request, lists []*postings) []*postings {
	var seen [8]grKey
	nseen := 0
	for _, e := range r.equivalents() {
		if e == r.attrs.Resource {
			continue
		}
		k := grKey{e.Group, e.Resource}
		dup := false
		for _, s := range seen[:nseen] {
			dup = dup || s == k
		}
		if dup {
			continue // a duplicate beyond len(seen) is harmless: merge dedupes
		}
		if nseen < len(seen) {
			seen[nseen] = k
			nseen++
		}
		lists = appendList(lists, ix.equiv[k])
		lists = appendList(lists, ix.equiv[grKey{k.group, "*"}])
		lists = appendList(lists, ix.equiv[grKey{"*", k.resource}])
	}
	return lists
}

// merge unions sorted lists into out, in order, without duplicates.
func merge(lists []*postings, out []int32) []int32 {
	var fixed [maxLists]int
	pos := fixed[:]
	if len(lists) > len(fixed) {
		pos = make([]int, len(lists))
	}
	for {
		next := int32(math.MaxInt32)
		for j, l := range lists {
			if pos[j] < len(l.pos) && l.pos[pos[j]] < next {
				next = l.pos[pos[j]]
			}
		}
		if next == math.MaxInt32 {
			return out
		}
		out = append(out, next)
		for j, l := range lists {
			if pos[j] < len(l.pos) && l.pos[pos[j]] == next {
				pos[j]++
			}
		}
	}
}
