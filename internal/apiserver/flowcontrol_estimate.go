package apiserver

import (
	"math"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/flowcontrol"
)

// Work estimation, as upstream's work estimator with its default
// configuration and size-based list costs (on by default in 1.37).
const (
	// a list takes a seat per 100 kB it is expected to hold in memory, at
	// most 100 (and the level's own bound); one served as the watch cache
	// would serve it streams, holding at most 1 MB.
	bytesPerSeat         = 100_000
	maxListSeats         = 100
	streamingListMaxSize = 1_000_000
	// a write holds, after it finished, a seat per 10 watches it may send
	// an event to, 5 ms per event, at most 10 seats.
	maxMutatingSeats    = 10
	watchesPerSeat      = 10
	watchEventExtraTime = 5 * time.Millisecond
)

func (s *Server) estimateWork(r *http.Request, rq *request, maxSeats int) flowcontrol.Estimate {
	info := rq.info
	if !info.IsResource {
		return flowcontrol.Estimate{Seats: 1}
	}
	switch info.Verb {
	case "list", "watch":
		return flowcontrol.Estimate{Seats: s.estimateListSeats(r, info, maxSeats)}
	case "create", "update", "patch", "delete":
		return s.estimateWrite(info, maxSeats)
	}
	return flowcontrol.Estimate{Seats: 1}
}

// estimateWrite: one seat while it runs; then, when at least 10 watches
// may receive its event, their events' time spread over at most
// maxMutatingSeats seats. A service account token request sends no event.
func (s *Server) estimateWrite(info *requestInfo, maxSeats int) flowcontrol.Estimate {
	if info.Resource == "serviceaccounts" && info.Subresource == "token" {
		return flowcontrol.Estimate{Seats: 1}
	}
	if maxSeats == 0 || maxSeats > maxMutatingSeats {
		maxSeats = maxMutatingSeats
	}
	watchers := s.watchCounts.interested(info)
	est := flowcontrol.Estimate{Seats: 1, Watchers: watchers, WatchersCounted: true}
	if watchers < watchesPerSeat {
		return est
	}
	final := int(math.Ceil(float64(watchers) / watchesPerSeat))
	work := float64(final) * watchEventExtraTime.Seconds() // seat-seconds
	est.FinalSeats = min(final, maxSeats)
	est.AdditionalLatency = time.Duration(work / float64(est.FinalSeats) * float64(time.Second))
	return est
}

// estimateListSeats: the memory a list or watch's initial events are
// expected to hold, from the resource's object count and average size.
func (s *Server) estimateListSeats(r *http.Request, info *requestInfo, maxSeats int) int {
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
	streamed := info.Verb == "watch" || !readsStorageDirectly(&opts)
	limited := count
	if opts.Limit > 0 && opts.Limit < count {
		limited = opts.Limit
	}
	objects := limited
	switch {
	case info.objectName() != "":
		objects = 1
	case streamed:
	case opts.FieldSelector != "" || opts.LabelSelector != "":
		objects = max(limited, count/2)
	}
	memory := objects * avgBytes
	if streamed {
		memory = min(memory, streamingListMaxSize)
	}
	seats := int(math.Ceil(float64(memory) / bytesPerSeat))
	return min(max(seats, 1), maxSeats)
}

// readsStorageDirectly: upstream's watch cache would pass this list to
// etcd (an exact revision, a continued list, a limited list at a given
// revision); any other it answers from the cache.
func readsStorageDirectly(opts *metav1.ListOptions) bool {
	switch opts.ResourceVersionMatch {
	case metav1.ResourceVersionMatchExact:
		return true
	case metav1.ResourceVersionMatchNotOlderThan:
		return false
	case "":
		if opts.Continue != "" {
			return true
		}
		return opts.Limit > 0 && opts.ResourceVersion != "" && opts.ResourceVersion != "0"
	}
	return true
}
