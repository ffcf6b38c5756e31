package apiserver

import "sync"

// readPins are the revisions lists and watches are reading at, a storage
// page at a time: until the last page is read the revision must stay
// readable, so compaction holds below the oldest (OldestReadRevision).
type readPins struct {
	mu   sync.Mutex
	revs map[int64]int
}

// pin holds rev until the returned func is called.
func (p *readPins) pin(rev int64) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.revs == nil {
		p.revs = map[int64]int{}
	}
	p.revs[rev]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.revs[rev]--; p.revs[rev] <= 0 {
			delete(p.revs, rev)
		}
	}
}

func (p *readPins) oldest() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	oldest := int64(0)
	for rev := range p.revs {
		if oldest == 0 || rev < oldest {
			oldest = rev
		}
	}
	return oldest
}

// OldestReadRevision is the oldest revision a list or watch of this server
// is still reading pages at (0: none); compacting the embedded store
// keeps it readable.
func (s *Server) OldestReadRevision() int64 { return s.readPins.oldest() }
