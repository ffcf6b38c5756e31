package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// hub is the least a server can do for watchers: each create's event is
// encoded once, its bytes shared by every watcher, and each watcher writes
// what gathered for it at most once a window (as admitd's embedded store
// coalesces), then flushes. Nothing is filtered, authorized or ended for
// being slow.
type hub struct {
	window time.Duration
	rev    atomic.Int64
	mu     sync.Mutex
	subs   map[string]map[*subscriber]struct{} // by the collection watched
	log    *durableLog                         // nil: creates are not kept
}

type subscriber struct {
	mu      sync.Mutex
	pending [][]byte
	wake    chan struct{}
}

func newHub(window time.Duration) *hub {
	return &hub{window: window, subs: map[string]map[*subscriber]struct{}{}}
}

// publish hands event to every watcher of collection.
func (h *hub) publish(collection string, event []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[collection] {
		s.mu.Lock()
		s.pending = append(s.pending, event)
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// serveWatch streams the events of its collection to one watcher until its client goes away.
func (h *hub) serveWatch(w http.ResponseWriter, r *http.Request) {
	s := &subscriber{wake: make(chan struct{}, 1)}
	collection := r.URL.Path
	h.mu.Lock()
	if h.subs[collection] == nil {
		h.subs[collection] = map[*subscriber]struct{}{}
	}
	h.subs[collection][s] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.subs[collection], s)
		h.mu.Unlock()
	}()
	flusher := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	var batch [][]byte
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.wake:
		}
		if h.window > 0 {
			time.Sleep(h.window)
		}
		s.mu.Lock()
		batch, s.pending = s.pending, batch[:0]
		s.mu.Unlock()
		for _, ev := range batch {
			if _, err := w.Write(ev); err != nil {
				return
			}
		}
		flusher.Flush()
		clear(batch)
	}
}

// addedEvent is the JSON watch event of a created object (JSON or
// protobuf, as client-go sends it), with the fields a server sets
// (namespace, uid, resourceVersion, creationTimestamp, one managedFields
// entry), so that it is as long as a real server's. ok is false for a body
// that does not decode.
func (h *hub) addedEvent(body []byte, namespace string) (event []byte, ok bool) {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return nil, false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	m.SetNamespace(namespace)
	m.SetUID("00000000-0000-0000-0000-000000000000")
	m.SetResourceVersion(strconv.FormatInt(h.rev.Add(1), 10))
	m.SetCreationTimestamp(now)
	m.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "loadmix", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:k":{}}}`)}}})
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, false
	}
	ev := make([]byte, 0, len(raw)+32)
	ev = append(ev, `{"type":"ADDED","object":`...)
	ev = append(ev, raw...)
	return append(ev, "}\n"...), true
}
