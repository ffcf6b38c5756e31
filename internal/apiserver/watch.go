package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/fanout"
)

// watchEvent is one frame of a watch stream.
type watchEvent struct {
	Type   string `json:"type"`
	Object any    `json:"object"`
}

// errWatchOfPartialList ends a watch asked to send its objects as
// PartialObjectMetadataList.
var errWatchOfPartialList = errors.New("a watch event's object is not a list")

// watchStream writes events to one client.
type watchStream struct {
	w       http.ResponseWriter
	flusher http.Flusher
	s       *Server
	res     *registry.Resource
	out     negotiated
	first   bool
	// fullObject: Table rows carry whole objects (includeObject=Object),
	// else their metadata, as upstream's watch of a Table
	fullObject bool
	// pending, when set, counts the events waiting behind the one being
	// sent; writes are then gathered until flushIfIdle.
	pending   func() int
	unflushed bool
	gathered  *bytes.Buffer
	// events counts the events sent; nil counts nothing.
	events *watchEventSeries
}

func (ws *watchStream) send(typ string, obj runtime.Object) error {
	frame, err := ws.frame(typ, obj)
	if err != nil {
		return err
	}
	return ws.write(frame)
}

// frame encodes one event as this stream sends it.
func (ws *watchStream) frame(typ string, obj runtime.Object) ([]byte, error) {
	if ws.out.as == asPartialList {
		// upstream cannot turn an event's object into a list: its watch
		// ends at the first event, having sent nothing
		return nil, errWatchOfPartialList
	}
	payload := ws.payload(typ, obj)
	if ws.out.protobufEvents() {
		return protobufEventFrame(typ, payload)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(watchEvent{Type: typ, Object: payload}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// write sends a frame, held in the batch of a burst or written and
// flushed, and counts the event once it is handed on, as upstream counts
// an event it has encoded to its response.
func (ws *watchStream) write(frame []byte) error {
	if ws.pending != nil {
		if err := ws.batch(frame); err != nil {
			return err
		}
		ws.events.sent(ws.eventSize(frame))
		return nil
	}
	if _, err := ws.w.Write(frame); err != nil {
		return err
	}
	ws.events.sent(ws.eventSize(frame))
	ws.flusher.Flush()
	return nil
}

// sendShared sends an event of a shared storage event: its frame is
// encoded once per event, type and output form, and the bytes shared by
// every watcher that sends it (tables, whose first frame differs per
// stream, are encoded per stream).
func (ws *watchStream) sendShared(se *sharedEvent, typ string, fromPrev bool, obj runtime.Object) error {
	if ws.out.as == asTable {
		return ws.send(typ, obj)
	}
	frame, err := se.frame(frameKey{typ: typ, prev: fromPrev, out: ws.out}, func() ([]byte, error) { return ws.frame(typ, obj) })
	if err != nil {
		return err
	}
	return ws.write(frame)
}

// payload is what an event carries: obj, or what the client asked it to
// be turned into. As upstream, an object that cannot be turned into the
// kind asked for (a list kind) is sent as it is, and errors never are.
func (ws *watchStream) payload(typ string, obj runtime.Object) any {
	if typ == "ERROR" {
		return obj
	}
	switch ws.out.as {
	case asTable:
		if typ == "BOOKMARK" {
			return obj
		}
		t := ws.s.tableFor(ws.res, []runtime.Object{obj}, "", ws.fullObject)
		asTableVersion(t, ws.out)
		t.ResourceVersion = accessor(obj).GetResourceVersion()
		if !ws.first {
			t.ColumnDefinitions = nil
		}
		ws.first = false
		return t
	case asPartial:
		return partialOf(obj, ws.out.version)
	}
	return obj
}

func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	out, err := negotiateWatch(r, res)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out = collectionMedia(r, out)
	q := r.URL.Query()
	lq, err := parseListQuery(res, q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if rq.info.Name != "" {
		if name, ok := lq.filter.fields.RequiresExactMatch("metadata.name"); !lq.filter.fields.Empty() && (!ok || name != rq.info.Name) {
			writeError(w, r, apierrors.NewBadRequest("fieldSelector metadata.name doesn't match requested name"))
			return
		}
		lq.filter = lq.filter.named(rq.info.Name)
	}
	if _, err := parseResourceVersion(lq.resourceVersion); err != nil {
		writeError(w, r, err) // upstream's watch answers this one 500, before streaming
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.watchTimeout(lq.timeoutSeconds))
	defer cancel()
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, r, errors.New("streaming unsupported"))
		return
	}
	setWarnings(w, rq)
	w.Header().Set("Content-Type", out.streamContentType())
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	ws := &watchStream{w: w, flusher: flusher, s: s, res: res, out: out, first: true, fullObject: tableIncludeObject(r),
		events: s.cfg.RequestMetrics.watchStarted(schema.GroupVersionResource{Group: rq.info.Group, Version: rq.info.Version, Resource: rq.info.Resource})}
	if err := s.streamWatch(ctx, ws, rq, res, lq); err != nil && ctx.Err() == nil {
		_ = ws.send("ERROR", statusFor(err))
	}
}

// streamWatch sends the initial events the request asks for, then every
// change after the starting revision.
func (s *Server) streamWatch(ctx context.Context, ws *watchStream, rq *request, res *registry.Resource, lq *listQuery) error {
	if ctx.Err() != nil {
		// a negative timeoutSeconds: over before it begins; upstream's
		// watch usually reports its expired context first
		_ = ws.send("ERROR", &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Code: http.StatusInternalServerError, Reason: metav1.StatusReasonInternalError, Message: ctx.Err().Error()})
		return nil
	}
	// Without sendInitialEvents (the deprecated /watch/ paths are not
	// defaulted), a watch from "" or "0" starts with the current state, as
	// upstream's legacy watches do.
	legacy := lq.resourceVersion == "" || lq.resourceVersion == "0"
	watchList := lq.sendInitialEvents != nil && *lq.sendInitialEvents
	if !watchList && (lq.sendInitialEvents != nil || !legacy) {
		from, _ := parseResourceVersion(lq.resourceVersion) // checked by serveWatch; "" and "0" are from now
		return s.follow(ctx, ws, rq, res, lq, from)
	}
	// the current state, sent as it is read, a storage page at a time
	sendFailed := errors.New("watcher gone")
	lm, err := s.scanList(ctx, res, rq.info.Namespace, &listQuery{filter: lq.filter}, listStreamPage, nil, func(obj runtime.Object) error {
		if ws.send("ADDED", obj) != nil {
			return sendFailed
		}
		return nil
	})
	if errors.Is(err, sendFailed) {
		return nil
	}
	if err != nil {
		return err
	}
	from, _ := strconv.ParseInt(lm.ResourceVersion, 10, 64)
	if watchList && lq.allowBookmarks {
		if err := ws.send("BOOKMARK", bookmark(res, from, true)); err != nil {
			return nil
		}
	}
	return s.follow(ctx, ws, rq, res, lq, from)
}

// follow streams storage events after revision from.
func (s *Server) follow(ctx context.Context, ws *watchStream, rq *request, res *registry.Resource, lq *listQuery, from int64) error {
	watcher, err := s.store.Watch(ctx, layout.ListPrefix(res, rq.info.Namespace), from)
	rq.releaseFlow() // initialized: the seats go back, as upstream's watch initialization signal
	if errors.Is(err, storage.ErrCompacted) {
		compacted, _ := s.store.CompactedRevision(ctx)
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, compacted+1))
	}
	if err != nil {
		return err
	}
	defer watcher.Stop()
	ws.pending = pendingOf(watcher)
	defer func() {
		ws.pending = nil
		if ws.unflushed {
			_ = ws.flushGathered() // the stream ends: an error has nowhere to go
		}
	}()
	bookmarks, stop := s.bookmarkTicker(lq)
	defer stop()
	last, marked := from, from
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-bookmarks:
			if last > marked {
				if ws.send("BOOKMARK", bookmark(res, last, false)) != nil || ws.flushIfIdle() != nil {
					return nil // the client is gone
				}
				marked = last
			}
		case ev, ok := <-watcher.Events():
			// the events that wait are taken without select, and written
			// out together
			for ; ; ev, ok = <-watcher.Events() {
				if !ok {
					return s.watchEnded(watcher, res, from)
				}
				last = ev.KV.ModRevision
				if sent, err := s.sendEvent(ctx, ws, res, lq, ev); !sent || err != nil {
					return err
				}
				if ws.pending() == 0 {
					break
				}
			}
			if ws.flushIfIdle() != nil {
				return nil // the client is gone
			}
		}
	}
}

// pendingOf counts the events waiting for a watch's reader: all of them
// for a watcher that can tell (the fanout Hub's, whose channel holds the
// first 256), else those its channel holds.
func pendingOf(w storage.Watcher) func() int {
	if p, ok := w.(interface{ Pending() int }); ok {
		return p.Pending
	}
	return func() int { return len(w.Events()) }
}

// sendEvent sends ev if the watch's selector lets it through; sent is
// false when the client is gone.
func (s *Server) sendEvent(ctx context.Context, ws *watchStream, res *registry.Resource, lq *listQuery, ev storage.Event) (sent bool, err error) {
	se := s.sharedEvents.get(res, ev)
	typ, fromPrev, obj, err := se.eventFor(ctx, res, ev, lq.filter)
	if err != nil || typ == "" {
		return err == nil, err
	}
	return ws.sendShared(se, typ, fromPrev, obj) == nil, nil
}

// watchEnded is how a watch whose storage watcher closed ends: a 410 when
// its start was compacted meanwhile, quietly (and counted) when it fell
// too far behind, as upstream ends a watcher that cannot keep up (the
// client watches again from the last event it got).
func (s *Server) watchEnded(watcher storage.Watcher, res *registry.Resource, from int64) error {
	err := watcher.Err()
	if errors.Is(err, storage.ErrCompacted) {
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d", from))
	}
	if errors.Is(err, fanout.ErrTooSlow) {
		if s.cfg.OnWatcherTerminated != nil {
			s.cfg.OnWatcherTerminated(res.Group, res.Resource)
		}
		return nil
	}
	return err
}

// bookmarkTicker ticks when a watch that allows bookmarks should send one
// (if it has progressed since the last): every BookmarkInterval.
func (s *Server) bookmarkTicker(lq *listQuery) (<-chan time.Time, func()) {
	if !lq.allowBookmarks {
		return nil, func() {}
	}
	t := time.NewTicker(s.cfg.BookmarkInterval)
	return t.C, t.Stop
}

// eventFor turns a shared storage event into a watch event, honouring
// the selector: an object that stops matching is reported as DELETED with
// its previous content (what the watcher last saw, at the event's
// revision, as upstream's watch cache sends it), one that starts matching
// as ADDED. typ is empty when the event is filtered
// out; fromPrev says the object sent is the previous one.
func (se *sharedEvent) eventFor(ctx context.Context, res *registry.Resource, ev storage.Event, f *objectFilter) (typ string, fromPrev bool, obj runtime.Object, err error) {
	cur, prev, err := se.decoded(ctx, res, ev)
	if err != nil {
		return "", false, nil, err
	}
	curMatch := cur != nil && f.matches(cur)
	prevMatch := prev != nil && f.matches(prev)
	switch {
	case ev.Type == storage.EventDelete && prevMatch:
		return "DELETED", true, prev, nil
	case curMatch && prevMatch:
		return "MODIFIED", false, cur, nil
	case curMatch:
		return "ADDED", false, cur, nil
	case prevMatch && cur != nil:
		return "DELETED", true, prev, nil
	}
	return "", false, nil, nil
}

// bookmark is a BOOKMARK event object at revision rev.
func bookmark(res *registry.Resource, rev int64, initialEnd bool) runtime.Object {
	obj, _ := layout.NewObject(res)
	m := accessor(obj)
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	if initialEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return obj
}

// decodeEvent decodes an event's object and previous object (nil when
// absent), converting custom resources in one call.
func decodeEvent(ctx context.Context, res *registry.Resource, ev storage.Event) (cur, prev runtime.Object, err error) {
	if !res.Unstructured {
		if ev.Type == storage.EventPut {
			if cur, err = layout.Decode(res, ev.KV); err != nil {
				return nil, nil, err
			}
		}
		if ev.PrevKV != nil {
			if prev, err = layout.Decode(res, *ev.PrevKV); err != nil {
				return nil, nil, err
			}
		}
		return cur, prev, nil
	}
	var kvs []storage.KeyValue
	if ev.Type == storage.EventPut {
		kvs = append(kvs, ev.KV)
	}
	if ev.PrevKV != nil {
		kvs = append(kvs, *ev.PrevKV)
	}
	objs, err := layout.DecodeAll(ctx, res, kvs)
	if err != nil {
		// as upstream's storage watcher reports an event it cannot decode
		return nil, nil, apierrors.NewInternalError(err)
	}
	if ev.Type == storage.EventPut {
		cur, objs = objs[0], objs[1:]
	}
	if len(objs) > 0 {
		prev = objs[0]
	}
	return cur, prev, nil
}
