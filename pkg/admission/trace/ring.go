package trace

import (
	"strings"
	"sync"
)

// DefaultRingSize is how many traces a server keeps by default.
const DefaultRingSize = 300

// Ring keeps the most recent entries, a fixed number of them. It is safe
// for concurrent use; Add is a slot write under a mutex.
type Ring struct {
	mu   sync.Mutex
	buf  []*Entry
	next int
	n    int
}

// NewRing returns a ring of size entries; size <= 0 keeps none.
func NewRing(size int) *Ring {
	if size < 0 {
		size = 0
	}
	return &Ring{buf: make([]*Entry, size)}
}

// Add keeps e, dropping the oldest entry when the ring is full; a nil
// entry (nothing captured) is not kept.
func (r *Ring) Add(e *Entry) {
	if r == nil || e == nil || len(r.buf) == 0 {
		return
	}
	r.mu.Lock()
	r.buf[r.next] = e
	r.next = (r.next + 1) % len(r.buf)
	if r.n < len(r.buf) {
		r.n++
	}
	r.mu.Unlock()
}

// newest returns the kept entries, newest first.
func (r *Ring) newest() []*Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Entry, 0, r.n)
	for i := 1; i <= r.n; i++ {
		out = append(out, r.buf[(r.next-i+len(r.buf))%len(r.buf)])
	}
	return out
}

// Get returns the newest entry with the audit ID, or nil.
func (r *Ring) Get(auditID string) *Entry {
	for _, e := range r.newest() {
		if e.req.AuditID == auditID {
			return e
		}
	}
	return nil
}

// Filter selects entries; an empty field selects all.
type Filter struct {
	// User is the user the request acted as (or its impersonator).
	User string
	// Resource is "pods", "pods/status", "deployments.apps" or
	// "deployments.apps/scale".
	Resource  string
	Namespace string
	// Decision is Allowed, Denied or Error, in any case.
	Decision string
	// Limit caps the number of entries; 0 is no limit.
	Limit int
}

// List returns the entries f selects, newest first.
func (r *Ring) List(f Filter) []*Entry {
	var out []*Entry
	for _, e := range r.newest() {
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
		if f.selects(e) {
			out = append(out, e)
		}
	}
	return out
}

func (f Filter) selects(e *Entry) bool {
	q := e.req
	switch {
	case f.User != "" && f.User != q.User && f.User != q.Impersonator:
		return false
	case f.Namespace != "" && f.Namespace != q.Namespace:
		return false
	case f.Decision != "" && !strings.EqualFold(f.Decision, e.Decision()):
		return false
	case f.Resource != "" && !resourceMatches(f.Resource, q):
		return false
	}
	return true
}

// resourceMatches compares "resource[.group][/subresource]" with a request;
// without a subresource it matches the resource's subresources too.
func resourceMatches(want string, q Request) bool {
	res, sub, hasSub := strings.Cut(want, "/")
	name, group, _ := strings.Cut(res, ".")
	if name != q.Resource || group != "" && group != q.APIGroup {
		return false
	}
	return !hasSub || sub == q.Subresource
}
