package trace

import (
	"strings"
	"sync"
)

// DefaultRingSize is how many traces a server keeps by default.
const DefaultRingSize = 300

// DefaultRingBytes is the most memory a server's traces hold by default
// (Entry.Bytes summed): a trace keeps the JSON of the object each mutating
// step started from (and ended with, for a policy), so 300 requests on
// megabyte objects would otherwise hold gigabytes.
const DefaultRingBytes = 64 << 20

// Ring keeps the most recent entries: at most a fixed number of them, and
// optionally at most a number of bytes between them (older entries leave
// first; an entry larger than the whole budget is kept alone). It is safe
// for concurrent use; Add is a few slot writes under a mutex.
type Ring struct {
	mu       sync.Mutex
	buf      []*Entry
	first    int // the oldest entry's slot
	n        int
	bytes    int64 // Entry.Bytes of the kept entries
	maxBytes int64 // 0: no byte bound
}

// NewRing returns a ring of size entries, with no byte bound; size <= 0
// keeps none.
func NewRing(size int) *Ring { return NewRingBytes(size, 0) }

// NewRingBytes returns a ring of at most size entries holding at most
// maxBytes between them (maxBytes <= 0: no byte bound); size <= 0 keeps
// none.
func NewRingBytes(size int, maxBytes int64) *Ring {
	return &Ring{buf: make([]*Entry, max(size, 0)), maxBytes: max(maxBytes, 0)}
}

// Add keeps e, dropping the oldest entries while the ring is full or over
// its byte budget; a nil entry (nothing captured) is not kept.
func (r *Ring) Add(e *Entry) {
	if r == nil || e == nil || len(r.buf) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == len(r.buf) {
		r.dropOldestLocked()
	}
	for r.maxBytes > 0 && r.n > 0 && r.bytes+e.bytes > r.maxBytes {
		r.dropOldestLocked()
	}
	r.buf[(r.first+r.n)%len(r.buf)] = e
	r.n++
	r.bytes += e.bytes
}

func (r *Ring) dropOldestLocked() {
	r.bytes -= r.buf[r.first].bytes
	r.buf[r.first] = nil
	r.first = (r.first + 1) % len(r.buf)
	r.n--
}

// Usage returns how many entries the ring keeps and their Entry.Bytes.
func (r *Ring) Usage() (entries int, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n, r.bytes
}

// newest returns the kept entries, newest first.
func (r *Ring) newest() []*Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Entry, 0, r.n)
	for i := r.n - 1; i >= 0; i-- {
		out = append(out, r.buf[(r.first+i)%len(r.buf)])
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
