package apiserver

import (
	"math"
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		return s.inflight.enter(w, rq)
	}
	rq.digest = flowcontrol.Digest{User: rq.user.Username, Groups: rq.user.Groups, IsResource: rq.info.IsResource,
		Verb: rq.event.Verb, APIGroup: rq.info.Group, Resource: rq.info.Resource, Subresource: rq.info.Subresource,
		Namespace: rq.info.Namespace, Name: rq.info.Name, Path: r.URL.Path}
	admitted, refused := s.flow.Admit(r.Context(), &rq.digest, s.flowWaitLimit(r), func(_ flowcontrol.Classification, maxSeats int) int {
		return s.estimateSeats(r, rq, maxSeats)
	})
	if refused != nil {
		setFlowHeaders(w, refused.Classification)
		refuseTooManyRequests(w, refused.RetryAfter)
		return false
	}
	rq.flow = admitted
	setFlowHeaders(w, admitted.Classification)
	return true
}

// releaseFlow gives the request's flow-control seats back; the second
// call does nothing.
func (rq *request) releaseFlow() {
	rq.flow.Release()
	if rq.inflightRelease != nil {
		rq.inflightRelease()
		rq.inflightRelease = nil
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

// Seat estimation, as upstream's work estimator with size-based list costs
// (on by default in 1.37): a list takes a seat per 100 kB it is expected to
// hold in memory, at most 100 (and the level's own bound); everything else
// one seat.
const (
	bytesPerSeat = 100_000
	maxListSeats = 100
)

func (s *Server) estimateSeats(r *http.Request, rq *request, maxSeats int) int {
	info := rq.info
	if !info.IsResource || (info.Verb != "list" && info.Verb != "watch") {
		return 1
	}
	if maxSeats == 0 || maxSeats > maxListSeats {
		maxSeats = maxListSeats
	}
	q := r.URL.Query()
	opts := metav1.ListOptions{}
	if err := metav1.Convert_url_Values_To_v1_ListOptions(&q, &opts, nil); err != nil {
		return maxSeats
	}
	if info.Verb == "watch" {
		initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
		legacy := opts.ResourceVersion == "" || opts.ResourceVersion == "0"
		if !initial && !legacy {
			return 1
		}
	}
	count, avgBytes, known := s.objectStats.get(info.Group, info.Resource)
	if !known {
		return 1
	}
	objects := count
	if opts.Limit > 0 && opts.Limit < count {
		objects = opts.Limit
	}
	switch {
	case info.Name != "":
		objects = 1
	case info.Verb == "watch":
	case opts.FieldSelector != "" || opts.LabelSelector != "":
		objects = max(objects, count/2)
	}
	seats := int(math.Ceil(float64(objects) * float64(avgBytes) / bytesPerSeat))
	return min(max(seats, 1), maxSeats)
}
