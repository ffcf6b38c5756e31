package apiserver

import (
	"bytes"
	"context"
	"net/http"
	"strconv"

	"github.com/admitd/admitd/internal/registry"
)

// Whole list answers: the JSON of a resource's whole list (one namespace
// or all), unfiltered, at the revision it was read, is kept; a list asking
// for the current state while the store is still at that revision is
// answered with the same bytes, without reading storage. A write anywhere
// moves the revision on, so nothing stale is ever served.
const (
	// listBodiesBytes bounds the bodies kept, all lists together.
	listBodiesBytes = 64 << 20
	// listBodyMaxBytes bounds one kept body.
	listBodyMaxBytes = 16 << 20
)

type listBody struct {
	rev  int64
	body []byte
}

// wholeListQuery: lq asks for a whole unfiltered list of the current
// state, the answer listBody keeps.
func wholeListQuery(res *registry.Resource, lq *listQuery) bool {
	return cacheable(res) && lq.limit == 0 && lq.continueToken == "" && lq.filter.empty() && lq.rvMatch == "" &&
		(lq.resourceVersion == "" || lq.resourceVersion == "0")
}

// listBody is the kept answer to the whole list of res under prefix when
// it is still the current state.
func (s *Server) listBody(ctx context.Context, res *registry.Resource, prefix string) []byte {
	s.items.mu.RLock()
	b := s.items.bodies[itemKey{res, prefix}]
	s.items.mu.RUnlock()
	if b == nil {
		return nil
	}
	rev, err := s.store.Revision(ctx)
	if err != nil || rev != b.rev {
		return nil
	}
	return b.body
}

// startCapture: the list of res under prefix may keep its answer, no other
// list of it doing so now (many lists at once after a write would each
// hold a copy of the whole answer). It returns the cache's generation and
// a capture sized as the last kept answer; endCapture must follow.
func (c *itemCache) startCapture(res *registry.Resource, prefix string) (*bodyCapture, int) {
	k := itemKey{res, prefix}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.capturing[k] {
		return nil, 0
	}
	if c.capturing == nil {
		c.capturing = map[itemKey]bool{}
	}
	c.capturing[k] = true
	capture := &bodyCapture{}
	if old := c.bodies[k]; old != nil {
		capture.buf.Grow(len(old.body) + len(old.body)/8)
	}
	return capture, c.gen
}

// endCapture keeps the answer captured by the list of res under prefix,
// read at revision rv, unless it is incomplete (keep false) or the item
// cache started over since the list began (gen).
func (c *itemCache) endCapture(res *registry.Resource, prefix string, gen int, capture *bodyCapture, rv string, keep bool) {
	k := itemKey{res, prefix}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.capturing, k)
	rev, err := strconv.ParseInt(rv, 10, 64)
	if !keep || capture.over || err != nil || gen != c.gen {
		return
	}
	body := capture.buf.Bytes()
	if cap(body) > len(body)+len(body)/4 {
		body = bytes.Clone(body) // what is kept is what is counted
	}
	if old := c.bodies[k]; old != nil {
		c.bodyBytes -= len(old.body)
	}
	if c.bodies == nil || c.bodyBytes+len(body) > listBodiesBytes {
		c.bodies, c.bodyBytes = map[itemKey]*listBody{}, 0
	}
	c.bodies[k] = &listBody{rev: rev, body: body}
	c.bodyBytes += len(body)
}

// writeListBody answers with a kept list, listWriteChunk bytes at a time.
func writeListBody(w http.ResponseWriter, rq *request, body []byte) {
	startJSON(w, rq)
	for len(body) > 0 {
		n := min(len(body), listWriteChunk)
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		body = body[n:]
	}
}

// bodyCapture collects a list's answer as it is written, giving up past
// listBodyMaxBytes.
type bodyCapture struct {
	buf  bytes.Buffer
	over bool
}

func (c *bodyCapture) Write(p []byte) (int, error) {
	if !c.over {
		if c.buf.Len()+len(p) > listBodyMaxBytes {
			c.over, c.buf = true, bytes.Buffer{}
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}
