package admission

import (
	"bytes"
	"encoding/json"
)

// changeWatch finds, on a verbose trace, what each compiled-in mutating
// plugin changed: the object's JSON before and after each plugin. A plugin
// that changed it gets a step marked Mutated with both, from which the trace
// derives the patch and field diff, as for a webhook. Ordinary requests
// pay nothing: the zero changeWatch checks nothing.
type changeWatch struct {
	on   bool
	last []byte
}

// newChangeWatch watches a's object when a's trace is verbose.
func newChangeWatch(a *Attributes) changeWatch {
	if !a.Record.Verbose() || a.Object == nil {
		return changeWatch{}
	}
	return changeWatch{on: true, last: objectJSON(a)}
}

// check compares a's object with what it was at the last check; changed
// reports a difference, with the JSON before and after.
func (w *changeWatch) check(a *Attributes) (base, after []byte, changed bool) {
	if !w.on {
		return nil, nil, false
	}
	now := objectJSON(a)
	base, w.last = w.last, now
	return base, now, base != nil && now != nil && !bytes.Equal(base, now)
}

// objectJSON is a's object as JSON, nil if it cannot be encoded.
func objectJSON(a *Attributes) []byte {
	if a.Object == nil {
		return nil
	}
	data, err := json.Marshal(a.Object)
	if err != nil {
		return nil
	}
	return data
}
