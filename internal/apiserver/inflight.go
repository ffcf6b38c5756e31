package apiserver

import (
	"net/http"
	"slices"
)

// inflightLimit is upstream's limit when API Priority and Fairness is off:
// at most so many read-only and so many mutating requests at once
// (--max-requests-inflight, --max-mutating-requests-inflight; 0 is no
// limit), system:masters exempt; the rest get 429 at once.
type inflightLimit struct {
	readOnly chan struct{}
	mutating chan struct{}
}

func newInflightLimit(readOnly, mutating int) *inflightLimit {
	l := &inflightLimit{}
	if readOnly > 0 {
		l.readOnly = make(chan struct{}, readOnly)
	}
	if mutating > 0 {
		l.mutating = make(chan struct{}, mutating)
	}
	return l
}

var readOnlyVerbs = map[string]bool{"get": true, "list": true, "watch": true}

// enter takes a slot for rq, or refuses it; marks (nil for none) note
// how many slots of its kind are taken, before and after it.
func (l *inflightLimit) enter(w http.ResponseWriter, rq *request, marks *requestMarks) bool {
	if slices.Contains(rq.user.Groups, "system:masters") {
		return true
	}
	sem, readOnly := l.mutating, readOnlyVerbs[rq.event.Verb]
	if readOnly {
		sem = l.readOnly
	}
	if sem == nil {
		return true
	}
	select {
	case sem <- struct{}{}:
		marks.note(readOnly, len(sem))
		rq.inflightRelease = func() {
			<-sem
			marks.note(readOnly, len(sem))
		}
		return true
	default:
		refuseTooManyRequests(w, 1)
		return false
	}
}
