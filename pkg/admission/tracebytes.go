package admission

import "unsafe"

// TraceBytes estimates the memory the record holds for its trace and audit
// annotations: the JSON of objects and the patches its steps keep, their
// texts, warnings and annotations, and the fixed size of each step. A
// keeper of many records (a server's ring of recent traces) bounds them by
// it: one mutating step on a large object holds that object's JSON.
func (r *Record) TraceBytes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := int(unsafe.Sizeof(*r)) + cap(r.order)*int(unsafe.Sizeof(stepRef(0)))
	n += (cap(r.steps) - len(r.steps)) * int(unsafe.Sizeof(Step{}))
	for i := range r.steps {
		n += stepBytes(&r.steps[i])
	}
	for _, w := range r.warnings {
		n += len(w) + int(unsafe.Sizeof(w))
	}
	for _, a := range r.annotations {
		n += len(a.Key) + len(a.Value) + int(unsafe.Sizeof(a))
	}
	return n
}

// whyBytes stands for what a skip's explanation holds (a compiled
// selector, a copy of the labels it was matched against).
const whyBytes = 512

// stepBytes is what one whole step holds.
func stepBytes(s *Step) int {
	n := int(unsafe.Sizeof(*s)) + len(s.Plugin) + len(s.Name) + len(s.Config) + len(s.Reason) + len(s.Err)
	d := s.Detail
	if d == nil {
		return n
	}
	n += int(unsafe.Sizeof(*d)) + len(d.Patch) + len(d.Base) + len(d.After)
	if d.Why != nil {
		n += whyBytes
	}
	for _, w := range d.Warnings {
		n += len(w)
	}
	for k, v := range d.AuditAnnotations {
		n += len(k) + len(v)
	}
	return n
}
