package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

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
	Metadata   metav1.ListMeta  `json:"metadata"`
	Items      []runtime.Object `json:"items"`
}

// listQuery is what a list or watch request asks for.
type listQuery struct {
	filter *objectFilter
	// limit is the page size; 0 is no limit (so is a negative one, as
	// upstream).
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
	return &listQuery{filter: f, limit: max(opts.Limit, 0), continueToken: opts.Continue,
		resourceVersion: opts.ResourceVersion, rvMatch: string(opts.ResourceVersionMatch), allowBookmarks: opts.AllowWatchBookmarks,
		sendInitialEvents: opts.SendInitialEvents, timeoutSeconds: opts.TimeoutSeconds}, nil
}

func (s *Server) serveList(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	n, err := negotiateOutput(r, res)
	if err != nil {
		writeError(w, r, err)
		return
	}
	lq, err := parseListQuery(res, r.URL.Query())
	if err != nil {
		writeError(w, r, err)
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

// listObjects reads one page of matching objects, scanning storage pages at
// one revision until the limit is met.
func (s *Server) listObjects(ctx context.Context, res *registry.Resource, namespace string, lq *listQuery) ([]runtime.Object, metav1.ListMeta, error) {
	prefix := layout.ListPrefix(res, namespace)
	opts, err := storageListOptions(prefix, lq)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	var out []runtime.Object
	var lm metav1.ListMeta
	pageSize := lq.limit
	for {
		if lq.limit > 0 {
			opts.Limit = lq.limit - int64(len(out))
			if !lq.filter.empty() {
				// as upstream's storage: a selector that drops items
				// reads pages twice as large each time, up to 10,000
				opts.Limit = max(opts.Limit, pageSize)
				pageSize = min(pageSize*2, maxListPage)
			}
		}
		page, err := s.store.List(ctx, prefix, opts)
		if err != nil {
			return nil, lm, listError(err, lq)
		}
		if opts.StartKey == "" {
			s.observeObjectStats(res, page)
		}
		opts.Revision = page.Revision
		lm.ResourceVersion = strconv.FormatInt(page.Revision, 10)
		objs, err := layout.DecodeAll(ctx, res, page.Items)
		if err != nil {
			return nil, lm, err
		}
		for i, obj := range objs {
			if !lq.filter.matches(obj) {
				continue
			}
			out = append(out, obj)
			if lq.limit > 0 && int64(len(out)) >= lq.limit {
				if page.More || i < len(objs)-1 {
					lm.Continue = encodeContinue(page.Items[i].Key+"\x00", prefix, page.Revision)
					if lq.filter.empty() {
						rc := page.RemainingCount
						lm.RemainingItemCount = &rc
					}
				}
				return out, lm, nil
			}
		}
		if !page.More {
			return out, lm, nil
		}
		opts.StartKey = page.Items[len(page.Items)-1].Key + "\x00"
	}
}

// observeObjectStats records the object count and average size a list's
// first page shows, for flow control's seat estimates.
func (s *Server) observeObjectStats(res *registry.Resource, page storage.ListResult) {
	if len(page.Items) == 0 {
		return
	}
	var bytes int64
	for _, kv := range page.Items {
		bytes += int64(len(kv.Value))
	}
	n := int64(len(page.Items))
	count := n + page.RemainingCount
	s.objectStats.observe(res.Group, res.Resource, count, bytes*count/n, s.cfg.Now())
}

// maxListPage is the largest page upstream's storage reads while a
// selector drops items.
const maxListPage = 10000

func listError(err error, lq *listQuery) error {
	if errors.Is(err, storage.ErrCompacted) {
		if lq.continueToken != "" {
			return apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
		}
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s", lq.resourceVersion))
	}
	if errors.Is(err, storage.ErrFutureRevision) {
		return apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %s", lq.resourceVersion), 1)
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
