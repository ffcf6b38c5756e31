package apiserver

import (
	"context"
	"net/http"
	"sync/atomic"
)

// lifecycle is what a server's shutdown changes: readyz fails once it has
// begun, and long-running requests (watches, streams) end when told.
type lifecycle struct {
	shuttingDown atomic.Bool
	// streams is the context every long-running request also ends with.
	streams    context.Context
	endStreams context.CancelFunc
	// activeStreams counts the long-running requests in flight.
	activeStreams atomic.Int64
}

func newLifecycle() lifecycle {
	ctx, cancel := context.WithCancel(context.Background())
	return lifecycle{streams: ctx, endStreams: cancel}
}

// BeginShutdown makes /readyz fail (its shutdown check), as kube-apiserver
// does as soon as it is told to stop, so that load balancers stop sending
// new requests; everything is still served.
func (s *Server) BeginShutdown() { s.shuttingDown.Store(true) }

// EndStreams ends every long-running request in flight, and any that
// starts after: a watch ends as when its timeout passes (its response
// completes cleanly, and the client watches again elsewhere).
func (s *Server) EndStreams() { s.endStreams() }

// ActiveStreams is how many long-running requests are in flight.
func (s *Server) ActiveStreams() int64 { return s.activeStreams.Load() }

// serveStream serves a long-running request, which also ends when
// EndStreams is called.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, info *requestInfo) {
	s.activeStreams.Add(1)
	defer s.activeStreams.Add(-1)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.streams, cancel)
	defer stop()
	s.serveRequest(ctx, w, r, info)
}
