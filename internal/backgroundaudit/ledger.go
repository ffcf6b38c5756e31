package backgroundaudit

import (
	"slices"
	"sort"
	"time"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
)

// ledger is what the Audit bindings found, object by object: filled by a
// scan, then kept current by the changes the scanner follows, so that a
// change to one object replaces that object's outcomes without a rescan.
// It holds an entry per object a binding matched (its storage key, and
// for an object with findings its reference and messages); the Results
// served are derived from it, at most MaxFindings per list.
type ledger struct {
	// bindings are the Audit bindings the scan was made for, in binding
	// order.
	bindings []bindingKey
	known    map[bindingKey]bool
	// objects is how many stored objects were evaluated, matched or not.
	objects int
	entries map[string]ledgerEntry
	started time.Time
}

// ledgerEntry is what the bindings that matched one object found.
type ledgerEntry struct {
	ref      ObjectRef
	outcomes []outcome
}

// outcome is one binding's verdict on one object.
type outcome struct {
	binding  bindingKey
	kind     outcomeKind
	messages []string
}

type outcomeKind uint8

const (
	passed outcomeKind = iota
	violated
	errored
)

func newLedger(bs []auditBinding, started time.Time) *ledger {
	l := &ledger{known: map[bindingKey]bool{}, entries: map[string]ledgerEntry{}, started: started}
	for _, b := range bs {
		k := bindingKey{b.policy.Name, b.binding.Name}
		if !l.known[k] {
			l.known[k] = true
			l.bindings = append(l.bindings, k)
		}
	}
	return l
}

// set records what the plugin's steps say of the object stored at key,
// replacing what was recorded of it before; isNew counts it as one more
// object evaluated.
func (l *ledger) set(key string, ref ObjectRef, steps []admission.Step, isNew bool) {
	if isNew {
		l.objects++
	}
	outcomes := l.outcomesOf(steps)
	if len(outcomes) == 0 {
		delete(l.entries, key)
		return
	}
	if !slices.ContainsFunc(outcomes, func(o outcome) bool { return o.kind != passed }) {
		ref = ObjectRef{} // only findings name their object
	}
	l.entries[key] = ledgerEntry{ref: ref, outcomes: outcomes}
}

// remove forgets the object that was stored at key.
func (l *ledger) remove(key string) {
	l.objects = max(l.objects-1, 0)
	delete(l.entries, key)
}

// outcomesOf are the verdicts of the Audit bindings among steps.
func (l *ledger) outcomesOf(steps []admission.Step) []outcome {
	var out []outcome
	for _, s := range steps {
		if s.Plugin != policies.ValidatingName || !s.Matched || s.Round != 0 {
			continue
		}
		k := bindingKey{s.Name, s.Config}
		if !l.known[k] {
			continue // a policy's configuration error, without binding
		}
		switch msgs := failures(s); {
		case len(msgs) > 0:
			out = append(out, outcome{binding: k, kind: violated, messages: msgs})
		case s.Err != "" && (s.Detail == nil || !s.Detail.FailedOpen):
			out = append(out, outcome{binding: k, kind: errored, messages: []string{s.Err}})
		default:
			out = append(out, outcome{binding: k, kind: passed})
		}
	}
	return out
}

// results are the ledger's findings by binding (by policy, then binding
// name), each binding's objects in storage key order; finished is the
// end of the scan, updated that of the last change followed since.
func (l *ledger) results(finished, updated time.Time) *Results {
	r := &Results{Started: l.started, Finished: finished, Updated: updated, Objects: l.objects, Bindings: []*BindingResult{}}
	byKey := make(map[bindingKey]*BindingResult, len(l.bindings))
	for _, k := range l.bindings {
		br := &BindingResult{Policy: k.policy, Binding: k.binding, Violations: []Finding{}}
		byKey[k] = br
		r.Bindings = append(r.Bindings, br)
	}
	keys := make([]string, 0, len(l.entries))
	for k := range l.entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		e := l.entries[key]
		for _, o := range e.outcomes {
			byKey[o.binding].add(e.ref, o)
		}
	}
	sort.Slice(r.Bindings, func(i, j int) bool {
		a, b := r.Bindings[i], r.Bindings[j]
		if a.Policy != b.Policy {
			return a.Policy < b.Policy
		}
		return a.Binding < b.Binding
	})
	return r
}

// add counts one verdict of br on the object ref.
func (br *BindingResult) add(ref ObjectRef, o outcome) {
	br.Evaluated++
	switch o.kind {
	case violated:
		br.Violations = br.keep(br.Violations, Finding{Object: ref, Messages: o.messages})
	case errored:
		br.Errors = br.keep(br.Errors, Finding{Object: ref, Messages: o.messages})
	default:
		br.passed++
	}
}
