package match

import (
	"slices"
	"unique"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// nsFilter drops, per request, the candidates whose namespaceSelector
// rejects the request's namespace. Upstream skips such a hook whatever its
// rules say, so dropping it changes no outcome. Identical selectors share an
// id and are evaluated once per request; a selector that requires a label
// key the namespace lacks is rejected without evaluation, the presence of
// each key being checked once; a posting list whose selectors all agree is
// kept or dropped whole.
type nsFilter struct {
	ids   []int32     // per criteria: its selector's id, or -1 (not filtered)
	sels  []*selector // by selector id
	keyOf []int32     // by selector id: a label key it requires, or -1
	keys  []string    // by key id
}

func newNSFilter(criteria []*Criteria) nsFilter {
	f := nsFilter{ids: make([]int32, len(criteria))}
	byHandle := map[unique.Handle[string]]int32{}
	byKey := map[string]int32{}
	for i, c := range criteria {
		f.ids[i] = -1
		s := &c.namespace
		if c.err != nil || s.key == (unique.Handle[string]{}) {
			continue // nothing to share: a parse error, {} or nil
		}
		id, ok := byHandle[s.key]
		if !ok {
			id = int32(len(f.sels))
			byHandle[s.key] = id
			f.sels = append(f.sels, s)
			f.keyOf = append(f.keyOf, keyID(byKey, &f.keys, requiredKey(s.sel)))
		}
		f.ids[i] = id
	}
	if len(f.sels) == 0 {
		return nsFilter{}
	}
	return f
}

// requiredKey returns a label key without which sel cannot match, or "".
func requiredKey(sel labels.Selector) string {
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In, selection.Exists:
			return r.Key()
		}
	}
	return ""
}

func keyID(byKey map[string]int32, keys *[]string, key string) int32 {
	if key == "" {
		return -1
	}
	id, ok := byKey[key]
	if !ok {
		id = int32(len(*keys))
		byKey[key] = id
		*keys = append(*keys, key)
	}
	return id
}

// summary describes the namespaceSelectors of a posting list, so that a
// list whose selectors all agree is kept or dropped whole.
type summary struct {
	ids      []int32 // the distinct selector ids in the list
	open     bool    // some criteria in the list is not filtered
	overflow bool    // more than maxSummaryIDs ids: filter entry by entry
}

const maxSummaryIDs = 8

func (f *nsFilter) summarize(pos []int32) summary {
	var s summary
	if len(f.sels) == 0 {
		return summary{open: true}
	}
	for _, i := range pos {
		id := f.ids[i]
		switch {
		case id < 0:
			s.open = true
		case slices.Contains(s.ids, id):
		case len(s.ids) == maxSummaryIDs:
			s.overflow = true
		default:
			s.ids = append(s.ids, id)
		}
	}
	return s
}

// smallIDs is the number of selector ids whose verdicts fit on the stack;
// larger configurations allocate one bitmap per request.
const smallIDs = 256

// verdicts caches, for one request, four bitmaps of nw words each: which
// selectors were evaluated and which select the namespace, which keys were
// looked up and which the namespace has.
type verdicts struct {
	nw    int
	big   []uint64 // when more than smallIDs ids
	small [4 * smallIDs / 64]uint64
}

func (v *verdicts) init(n int) {
	v.nw = (n + 63) / 64
	if n > smallIDs {
		v.big = make([]uint64, 4*v.nw)
	}
}

func (v *verdicts) words() []uint64 {
	if v.big != nil {
		return v.big
	}
	return v.small[:]
}

// get returns whether bit id of bitmap m was recorded, and its value.
func (v *verdicts) get(m int, id int32) (known, value bool) {
	w, bit, bits := int(id>>6), uint64(1)<<(id&63), v.words()
	return bits[2*m*v.nw+w]&bit != 0, bits[(2*m+1)*v.nw+w]&bit != 0
}

// set records the value of bit id of bitmap m.
func (v *verdicts) set(m int, id int32, value bool) {
	w, bit, bits := int(id>>6), uint64(1)<<(id&63), v.words()
	bits[2*m*v.nw+w] |= bit
	if value {
		bits[(2*m+1)*v.nw+w] |= bit
	}
}

// Bitmaps of verdicts.
const (
	selectorBits = 0 // by selector id: whether it selects the namespace
	keyBits      = 1 // by key id: whether the namespace has the label
)

// selects reports whether selector id selects the labels.
func (f *nsFilter) selects(id int32, lbls map[string]string, v *verdicts) bool {
	if known, value := v.get(selectorBits, id); known {
		return value
	}
	ok := true
	if k := f.keyOf[id]; k >= 0 {
		var known bool
		if known, ok = v.get(keyBits, k); !known {
			_, ok = lbls[f.keys[k]]
			v.set(keyBits, k, ok)
		}
	}
	ok = ok && f.sels[id].sel.Matches(labels.Set(lbls))
	v.set(selectorBits, id, ok)
	return ok
}

// labels returns the namespace labels to filter by, or false when the
// request must not be filtered: cluster-scoped (never excluded), a
// namespace write (labels from the mutable object), or a failed lookup
// (Match reports the error if the rules match).
func (f *nsFilter) labels(r *Request) (map[string]string, bool) {
	if len(f.sels) == 0 {
		return nil, false
	}
	a := r.attrs
	if (a.Namespace == "" && a.Resource.Resource != "namespaces") || isNamespaceWrite(a) {
		return nil, false
	}
	lbls, err := r.namespaceLabels()
	return lbls, err == nil
}

type class uint8

const (
	allIn class = iota
	allOut
	someOut
)

func (f *nsFilter) classify(s *summary, lbls map[string]string, v *verdicts) class {
	if s.overflow {
		return someOut
	}
	in, out := s.open, false
	for _, id := range s.ids {
		if f.selects(id, lbls, v) {
			in = true
		} else {
			out = true
		}
	}
	switch {
	case !out:
		return allIn
	case !in:
		return allOut
	}
	return someOut
}

// filter drops the candidates whose selector rejects the labels. owned
// says cands may be overwritten; otherwise the result is built in buf, and
// only if something is dropped.
func (f *nsFilter) filter(cands []int32, owned bool, buf []int32, lbls map[string]string, v *verdicts) []int32 {
	var out []int32
	dropped := false
	ids := f.ids
	for k, i := range cands {
		keep := true
		if id := ids[i]; id >= 0 {
			keep = f.selects(id, lbls, v)
		}
		switch {
		case keep && dropped:
			out = append(out, i)
		case !keep && !dropped && owned:
			out, dropped = cands[:k], true
		case !keep && !dropped:
			out, dropped = append(buf[:0], cands[:k]...), true
		}
	}
	if !dropped {
		return cands
	}
	return out
}
