package match

import "math"

// grKey is a group/resource pair of a rule; either may be "*".
type grKey struct {
	group, resource string
}

// Index finds, for a request, the criteria that could match it, without
// looking at the others. Criteria are indexed by the (group, resource) pairs
// their rules name, wildcards included; criteria with matchPolicy Equivalent
// are also found through the resources equivalent to the request's. An
// Index is immutable and safe for concurrent use: build one per
// configuration generation.
//
// The index is conservative: a criteria it does not return cannot match and
// cannot fail (Match would return a Skip reason for it).
type Index struct {
	n      int
	always []int32           // criteria every request visits
	exact  map[grKey][]int32 // every criteria, by its rules' pairs
	equiv  map[grKey][]int32 // Equivalent criteria, by rules and exclude rules
}

// NewIndex indexes criteria; Candidates returns positions in this slice.
func NewIndex(criteria []*Criteria) *Index {
	ix := &Index{n: len(criteria), exact: map[grKey][]int32{}, equiv: map[grKey][]int32{}}
	for i, c := range criteria {
		pos := int32(i)
		keys := ruleKeys(c.rules)
		var eqKeys []grKey
		if c.equivalent {
			eqKeys = append(ruleKeys(c.exclude), keys...)
		}
		if c.err != nil || c.anyResource || hasAll(keys) || hasAll(eqKeys) {
			ix.always = append(ix.always, pos)
			continue
		}
		for _, k := range keys {
			ix.exact[k] = appendOnce(ix.exact[k], pos)
		}
		for _, k := range eqKeys {
			ix.equiv[k] = appendOnce(ix.equiv[k], pos)
		}
	}
	return ix
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

func appendOnce(list []int32, pos int32) []int32 {
	if n := len(list); n > 0 && list[n-1] == pos {
		return list
	}
	return append(list, pos)
}

// maxLists is the number of posting lists a lookup keeps on the stack;
// more spill to the heap.
const maxLists = 16

// Candidates returns, in configuration order, the positions of the criteria
// that could match the request. The result may share memory with the index
// (read it, never write it) or with buf, which is reused when merging is
// needed; pass buf[:0] of a slice kept per goroutine to avoid allocating.
func (ix *Index) Candidates(r *Request, buf []int32) []int32 {
	lists := make([][]int32, 0, maxLists)
	lists = appendList(lists, ix.always)
	a := r.attrs
	g, res := a.Resource.Group, a.Resource.Resource
	lists = appendList(lists, ix.exact[grKey{g, res}])
	lists = appendList(lists, ix.exact[grKey{g, "*"}])
	lists = appendList(lists, ix.exact[grKey{"*", res}])
	if len(ix.equiv) > 0 {
		lists = ix.appendEquivalents(r, lists)
	}
	switch len(lists) {
	case 0:
		return buf[:0]
	case 1:
		return lists[0]
	}
	return merge(lists, buf[:0])
}

func appendList(lists [][]int32, l []int32) [][]int32 {
	if len(l) == 0 {
		return lists
	}
	return append(lists, l)
}

// appendEquivalents appends the posting lists of the distinct
// group/resources of the resources equivalent to the request's.
func (ix *Index) appendEquivalents(r *Request, lists [][]int32) [][]int32 {
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
func merge(lists [][]int32, out []int32) []int32 {
	var fixed [maxLists]int
	pos := fixed[:]
	if len(lists) > len(fixed) {
		pos = make([]int, len(lists))
	}
	for {
		next := int32(math.MaxInt32)
		for j, l := range lists {
			if pos[j] < len(l) && l[pos[j]] < next {
				next = l[pos[j]]
			}
		}
		if next == math.MaxInt32 {
			return out
		}
		out = append(out, next)
		for j, l := range lists {
			if pos[j] < len(l) && l[pos[j]] == next {
				pos[j]++
			}
		}
	}
}
