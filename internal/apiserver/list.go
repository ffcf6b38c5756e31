package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// listResponse is the wire form of a <Kind>List.
type listResponse struct {
	Kind       string           `json:"kind"`
	APIVersion string           `json:"apiVersion"`
	Metadata   any              `json:"metadata"` // listMetadata's
	Items      []runtime.Object `json:"items"`
}

// listQuery is what a list or watch request asks for.
type listQuery struct {
	filter *objectFilter
	// limit is the page size; 0 is no limit (so is a negative one, and
	// any limit of a list at resourceVersion "0", as upstream's watch
	// cache serves it whole).
	limit           int64
	continueToken   string
	resourceVersion string
	rvMatch         string
	allowBookmarks  bool
	// sendInitialEvents is set on a watch from "" or "0" by upstream's
	// WatchList defaults when the request does not say.
	sendInitialEvents *bool
	timeoutSeconds    *int64
}

// parseListQuery reads a list or watch request's options as upstream's
// list handler does (decodeListOptions) and checks its field selector
// against the resource's field labels.
func parseListQuery(res *registry.Resource, q url.Values) (*listQuery, error) {
	opts, err := decodeListOptions(q)
	if err != nil {
		return nil, err
	}
	f, err := newObjectFilter(res, opts.LabelSelector, opts.FieldSelector)
	if err != nil {
		return nil, err
	}
	limit := max(opts.Limit, 0)
	if opts.ResourceVersion == "0" && opts.Continue == "" {
		limit = 0
	}
	return &listQuery{filter: f, limit: limit, continueToken: opts.Continue,
		resourceVersion: opts.ResourceVersion, rvMatch: string(opts.ResourceVersionMatch), allowBookmarks: opts.AllowWatchBookmarks,
		sendInitialEvents: opts.SendInitialEvents, timeoutSeconds: opts.TimeoutSeconds}, nil
}

func (s *Server) serveList(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	n, err := negotiateOutput(r, res)
	if err != nil {
		writeError(w, r, err)
		return
	}
	n = collectionMedia(r, n)
	lq, err := parseListQuery(res, r.URL.Query())
	if err != nil {
		writeError(w, r, err)
		return
	}
	switch {
	case n.as == "" && n.media == mediaJSON:
		s.serveJSONList(w, r, rq, res, lq)
		return
	case n.as == asTable || n.as == asPartialList:
		s.serveListAs(w, r, rq, res, lq, n)
		return
	case n.as == "" && n.media == mediaProtobuf && canStreamProtobuf(res):
		s.serveProtobufList(w, r, rq, res, lq, protobufList(res))
		return
	case n.as == "" && n.media == mediaYAML:
		s.serveYAMLList(w, r, rq, res, lq)
		return
	}
	items, meta, err := s.listObjects(r.Context(), res, rq.info.Namespace, lq)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out, err := s.transformList(r, res, n, items, meta)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeNegotiated(w, r, http.StatusOK, n, out)
}

// serveListAs answers a list as a Table or as PartialObjectMetadataList,
// made an object at a time as storage is read: the list holds rows or
// metadata, never every decoded object.
func (s *Server) serveListAs(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource, lq *listQuery, n negotiated) {
	if c, ok := s.streamedCollection(r, res, n); ok {
		s.serveJSONCollection(w, r, rq, res, lq, c)
		return
	}
	if n.as == asPartialList && n.media == mediaProtobuf && n.version == "v1" {
		s.serveProtobufList(w, r, rq, res, lq, protobufPartialList)
		return
	}
	var each func(obj runtime.Object) error
	var finish func(lm metav1.ListMeta) any
	if n.as == asTable {
		table := s.tableBuilder(res, tableIncludeObject(r))
		each = func(obj runtime.Object) error { table.Add(obj); return nil }
		finish = func(lm metav1.ListMeta) any {
			t := table.Table()
			t.ListMeta = lm
			asTableVersion(t, n)
			return t
		}
	} else {
		parts := []metav1.PartialObjectMetadata{}
		each = func(obj runtime.Object) error { parts = append(parts, *partialOf(obj, n.version)); return nil }
		finish = func(lm metav1.ListMeta) any { return partialListOf(parts, lm, n.version) }
	}
	lm, err := s.scanList(r.Context(), res, rq.info.Namespace, lq, listStreamPage, nil, each)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeNegotiated(w, r, http.StatusOK, n, finish(lm))
}

// streamedCollection is the Table or PartialObjectMetadataList n asks
// for as serveJSONCollection writes it, when it is JSON and its rows are
// final once made.
func (s *Server) streamedCollection(r *http.Request, res *registry.Resource, n negotiated) (jsonCollection, bool) {
	if n.media != mediaJSON {
		return jsonCollection{}, false
	}
	if n.as == asPartialList {
		return jsonCollection{
			empty: func(lm metav1.ListMeta) any { return partialListOf([]metav1.PartialObjectMetadata{}, lm, n.version) },
			field: "items",
			item:  func(obj runtime.Object) any { return partialOf(obj, n.version) },
		}, true
	}
	table := s.tableBuilder(res, tableIncludeObject(r))
	if !table.RowsStandAlone() {
		return jsonCollection{}, false
	}
	return jsonCollection{
		empty: func(lm metav1.ListMeta) any {
			t := table.Table()
			t.ListMeta = lm
			asTableVersion(t, n)
			return t
		},
		field: "rows",
		item: func(obj runtime.Object) any {
			row := table.Row(obj)
			asRowVersion(&row, n)
			return row
		},
	}, true
}

// listObjects reads one page of matching objects, scanning storage pages at
// one revision until the limit is met.
func (s *Server) listObjects(ctx context.Context, res *registry.Resource, namespace string, lq *listQuery) ([]runtime.Object, metav1.ListMeta, error) {
	var out []runtime.Object
	lm, err := s.scanList(ctx, res, namespace, lq, 0, nil, func(obj runtime.Object) error {
		out = append(out, obj)
		return nil
	})
	return out, lm, err
}

// scanList calls each, in key order, for every stored object of res under
// namespace that lq's filter matches, all read at one revision, until
// lq.limit objects were given (then the returned ListMeta has the continue
// token and, unfiltered, the remaining count). Without a limit, storage is
// read pageSize keys at a time (0: all at once), so that a caller that
// does not keep the objects holds one page. started, when set, is called
// with the list's resourceVersion once it is known, before the first
// object.
func (s *Server) scanList(ctx context.Context, res *registry.Resource, namespace string, lq *listQuery, pageSize int64,
	started func(resourceVersion string) error, each func(runtime.Object) error) (metav1.ListMeta, error) {
	return s.scanPages(ctx, res, namespace, lq, pageSize, started, nil, func(page storage.ListResult, want int64) (int64, int, error) {
		objs, err := layout.DecodeAll(ctx, res, page.Items)
		if err != nil {
			return 0, -1, err
		}
		taken := int64(0)
		for i, obj := range objs {
			objs[i] = nil // the caller keeps it or not
			if !lq.filter.matches(obj) {
				continue
			}
			if err := each(obj); err != nil {
				return taken, -1, err
			}
			if taken++; want > 0 && taken >= want {
				return taken, i, nil
			}
		}
		return taken, -1, nil
	})
}

// pageTaker takes the matching objects of one storage page, in order, at
// most want of them (0: all); it returns how many it took and, when it
// took want, the index of the last one (else -1).
type pageTaker func(page storage.ListResult, want int64) (taken int64, last int, err error)

// scanPages reads the pages of a list at one revision and gives each to
// take, as scanList describes; have, when set, tells storage which values
// the taker already has (storage.ListOptions.HaveValue).
func (s *Server) scanPages(ctx context.Context, res *registry.Resource, namespace string, lq *listQuery, pageSize int64,
	started func(resourceVersion string) error, have func(key string, rev int64) bool, take pageTaker) (metav1.ListMeta, error) {
	prefix := layout.ListPrefix(res, namespace)
	var lm metav1.ListMeta
	opts, err := storageListOptions(prefix, lq)
	if err == nil {
		err = s.waitForRevision(ctx, max(opts.Revision, listedRevision(lq)))
	}
	if err != nil {
		return lm, err
	}
	opts.HaveValue = have
	given := int64(0)
	if lq.limit > 0 {
		pageSize = lq.limit
	}
	stats := listStats{whole: opts.StartKey == ""}
	var cost storageListCost
	start := time.Now()
	defer func() {
		stats.record(s, res)
		cost.fetched, cost.returned = stats.keys, given
		s.cfg.RequestMetrics.recordStorageList(res.GroupResource(), cost, start)
	}()
	for first := true; ; first = false {
		opts.Limit = pageSize
		// only a limited, unfiltered list tells its remaining count
		opts.NoRemainingCount = lq.limit <= 0 || !lq.filter.empty()
		if lq.limit > 0 {
			opts.Limit = lq.limit - given
			if !lq.filter.empty() {
				// as upstream's storage: a selector that drops items
				// reads pages twice as large each time, up to 10,000
				opts.Limit = max(opts.Limit, pageSize)
				pageSize = min(pageSize*2, maxListPage)
			}
		}
		page, err := s.store.List(ctx, prefix, opts)
		if err != nil {
			return lm, s.listError(ctx, err, lq, prefix, opts.Revision)
		}
		if first && page.More {
			defer s.readPins.pin(page.Revision)()
		}
		stats.page(page, !opts.NoRemainingCount)
		opts.Revision = page.Revision
		lm.ResourceVersion = strconv.FormatInt(page.Revision, 10)
		if first && started != nil {
			if err := started(lm.ResourceVersion); err != nil {
				return lm, err
			}
		}
		want := int64(0)
		if lq.limit > 0 {
			want = lq.limit - given
		}
		taken, last, err := take(page, want)
		cost.evaluated += evaluated(page, last)
		if err != nil {
			return lm, err
		}
		given += taken
		if last >= 0 {
			if page.More || last < len(page.Items)-1 {
				lm.Continue = encodeContinue(page.Items[last].Key+"\x00", prefix, page.Revision)
				if lq.filter.empty() {
					rc := page.RemainingCount + int64(len(page.Items)-1-last)
					lm.RemainingItemCount = &rc
				}
			}
			return lm, nil
		}
		if !page.More {
			return lm, nil
		}
		opts.StartKey = page.Items[len(page.Items)-1].Key + "\x00"
	}
}

// evaluated is how many items of page a taker tested: up to the last it
// took, or all of them.
func evaluated(page storage.ListResult, last int) int64 {
	if last >= 0 {
		return int64(last + 1)
	}
	return int64(len(page.Items))
}

// listStats is what a list learns of its resource's objects, for flow
// control's seat estimates: their count, when the list read from the
// first key to the last or storage counted the rest, and their average
// stored size, over the values it read.
type listStats struct {
	whole         bool // started at the first key
	keys          int64
	count         int64 // 0: unknown
	valued, bytes int64
}

func (ls *listStats) page(page storage.ListResult, counted bool) {
	ls.keys += int64(len(page.Items))
	for _, kv := range page.Items {
		if kv.Value != nil {
			ls.valued++
			ls.bytes += int64(len(kv.Value))
		}
	}
	switch {
	case !ls.whole:
	case !page.More:
		ls.count = ls.keys
	case counted:
		ls.count = ls.keys + page.RemainingCount
	}
}

func (ls *listStats) record(s *Server, res *registry.Resource) {
	avg := int64(-1)
	if ls.valued > 0 {
		avg = ls.bytes / ls.valued
	}
	s.objectStats.observe(res.Group, res.Resource, ls.count, avg, s.cfg.Now())
}

// maxListPage is the largest page upstream's storage reads while a
// selector drops items.
const maxListPage = 10000

func (s *Server) listError(ctx context.Context, err error, lq *listQuery, prefix string, rev int64) error {
	if errors.Is(err, storage.ErrCompacted) {
		if lq.continueToken != "" {
			return continueExpired(lq.continueToken, prefix)
		}
		// upstream's storage's words for a list at a compacted revision
		return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
	}
	if errors.Is(err, storage.ErrFutureRevision) {
		// the store went back below a revision it had reached (etcd
		// restored from a backup)
		current, revErr := s.store.Revision(ctx)
		if revErr != nil {
			return revErr
		}
		return tooLargeResourceVersion(max(rev, listedRevision(lq)), current)
	}
	return err
}

// listedRevision is the revision a list's resourceVersion asks for, which
// the store must have reached before the list is read (0: none, or "0":
// any); storageListOptions has checked that it parses.
func listedRevision(lq *listQuery) int64 {
	rev, _ := parseResourceVersion(lq.resourceVersion)
	return rev
}

// continueExpired is upstream's 410 for a continue token whose revision was
// compacted: it carries a token continuing from the same key at the
// latest revision (rv -1), for a client willing to see an inconsistent
// list.
func continueExpired(token, prefix string) error {
	err := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
	if key, _, decodeErr := decodeContinue(token, prefix); decodeErr == nil {
		err.ErrStatus.ListMeta.Continue = encodeContinue(key, prefix, -1)
	}
	return err
}

// storageListOptions are where a list of prefix starts, as upstream's
// storage reads its options: the continue token's key and revision (a
// resourceVersion beside it is refused), else the revision an Exact
// resourceVersion, or a legacy one with a limit, asks for.
func storageListOptions(prefix string, lq *listQuery) (storage.ListOptions, error) {
	var opts storage.ListOptions
	if lq.continueToken != "" {
		key, rev, err := decodeContinue(lq.continueToken, prefix)
		if err != nil {
			return opts, err
		}
		if lq.resourceVersion != "" && lq.resourceVersion != "0" {
			return opts, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		opts.StartKey = key
		if rev > 0 {
			opts.Revision = rev
		}
		return opts, nil
	}
	if lq.resourceVersion == "" {
		return opts, nil
	}
	rev, err := parseResourceVersion(lq.resourceVersion)
	if err != nil {
		return opts, invalidListResourceVersion(err)
	}
	switch lq.rvMatch {
	case string(metav1.ResourceVersionMatchExact):
		opts.Revision = rev
	case "":
		if lq.limit > 0 && rev > 0 {
			opts.Revision = rev
		}
	}
	return opts, nil
}

func accessor(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("object without metadata: %T", obj))
	}
	return m
}

// queryBool reads a boolean query parameter as upstream's parameter codec
// (runtime.Convert_Slice_string_To_bool): false when absent, "0" or "false"
// in any case; true for anything else, "" and "yes" included.
func queryBool(vals []string) bool {
	return len(vals) > 0 && vals[0] != "0" && !strings.EqualFold(vals[0], "false")
}
