package apiserver

import (
	"net/http"
	"strconv"
	"time"

	"github.com/admitd/admitd/internal/flowcontrol"
)

// Response headers naming the FlowSchema and priority level (by UID, as
// upstream: names could tell a refused client it is classified low), in
// the canonical form Header.Set would make of them on every request.
var (
	headerFlowSchemaUID    = http.CanonicalHeaderKey("X-Kubernetes-PF-FlowSchema-UID")
	headerPriorityLevelUID = http.CanonicalHeaderKey("X-Kubernetes-PF-PriorityLevel-UID")
)

// maxWaitLimit bounds how long a request may wait in its queue; a request
// with a deadline waits at most a quarter of it, one without (a watch) a
// quarter of the request timeout.
const maxWaitLimit = time.Minute

// enterFlowControl seats rq under API Priority and Fairness, or under the
// plain in-flight limits when APF is off, before it is authorized and
// served; false means the request was refused (answered 429). The seats
// go back with rq.releaseFlow (a watch's once it is initialized).
func (s *Server) enterFlowControl(w http.ResponseWriter, r *http.Request, rq *request) bool {
	if s.flow == nil && s.inflight == nil {
		return true
	}
	if s.isLongRunning(rq.info) && (s.flow == nil || rq.info.Verb != "watch") {
		return true
	}
	if s.flow == nil {
		return s.inflight.enter(w, rq, s.executingMarks())
	}
	rq.digest = flowcontrol.Digest{User: rq.user.Username, Groups: rq.user.Groups, IsResource: rq.info.IsResource,
		Verb: rq.event.Verb, APIGroup: rq.info.Group, Resource: rq.info.Resource, Subresource: rq.info.Subresource,
		Namespace: rq.info.Namespace, Name: rq.info.objectName(), Path: r.URL.Path, APIVersion: rq.info.Version}
	admitted, refused := s.flow.Admit(r.Context(), &rq.digest, s.flowWaitLimit(r), func(_ flowcontrol.Classification, maxSeats int) flowcontrol.Estimate {
		return s.estimateWork(r, rq, maxSeats)
	})
	if refused != nil {
		setFlowHeaders(w, refused.Classification)
		refuseTooManyRequests(w, refused.RetryAfter)
		return false
	}
	rq.flow = admitted
	if m := s.cfg.RequestMetrics; m != nil {
		rq.executing, rq.readOnly = &m.marks, readOnlyVerbs[rq.event.Verb]
		rq.executing.add(rq.readOnly, 1)
	}
	if rq.info.Verb == "watch" {
		rq.forgetWatch = s.watchCounts.register(r, rq.info)
	}
	setFlowHeaders(w, admitted.Classification)
	return true
}

// releaseFlow gives the request's flow-control seats back; the second
// call does nothing.
func (rq *request) releaseFlow() {
	rq.flow.Release()
	if rq.executing != nil {
		rq.executing.add(rq.readOnly, -1)
		rq.executing = nil
	}
	if rq.inflightRelease != nil {
		rq.inflightRelease()
		rq.inflightRelease = nil
	}
}

// leaveFlowControl ends the request under flow control: its seats go back
// if they have not, and a watch is no longer counted.
func (rq *request) leaveFlowControl() {
	rq.releaseFlow()
	if rq.forgetWatch != nil {
		rq.forgetWatch()
		rq.forgetWatch = nil
	}
}

// flowWaitLimit is how long a request may wait in its queue, as upstream's
// filter: a quarter of the request's time (at most a minute).
func (s *Server) flowWaitLimit(r *http.Request) time.Duration {
	limit := s.cfg.RequestTimeout / 4
	if deadline, ok := r.Context().Deadline(); ok {
		limit = time.Until(deadline) / 4
	}
	return min(limit, maxWaitLimit)
}

func setFlowHeaders(w http.ResponseWriter, cl flowcontrol.Classification) {
	h := w.Header()
	h[headerFlowSchemaUID], h[headerPriorityLevelUID] = cl.UIDHeaderValues()
}

// refuseTooManyRequests is upstream's refusal: plain text, not a Status.
func refuseTooManyRequests(w http.ResponseWriter, retryAfter int64) {
	w.Header().Set("Retry-After", strconv.FormatInt(retryAfter, 10))
	http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
}

// executingMarks are where the in-flight limit notes its requests; nil
// without request metrics.
func (s *Server) executingMarks() *requestMarks {
	if s.cfg.RequestMetrics == nil {
		return nil
	}
	return &s.cfg.RequestMetrics.marks
}
