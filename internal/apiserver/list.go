package apiserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
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
	filter          *objectFilter
	limit           int64
	continueKey     string
	continueRev     int64
	resourceVersion string
	rvMatch         string
	allowBookmarks  bool
}

func parseListQuery(res *registry.Resource, q url.Values) (*listQuery, error) {
	f, err := newObjectFilter(res, q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		return nil, err
	}
	lq := &listQuery{filter: f, resourceVersion: q.Get("resourceVersion"), rvMatch: q.Get("resourceVersionMatch"),
		allowBookmarks: queryBool(q["allowWatchBookmarks"])}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.ParseInt(l, 10, 64)
		if err != nil || n < 0 {
			return nil, errBadRequest("invalid limit %q", l)
		}
		lq.limit = n
	}
	if c := q.Get("continue"); c != "" {
		key, rev, err := decodeContinue(c)
		if err != nil {
			return nil, err
		}
		lq.continueKey, lq.continueRev = key, rev
	}
	return lq, nil
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
	if lq.continueKey != "" && !strings.HasPrefix(lq.continueKey, prefix) {
		// Another list's token (upstream's hold keys relative to the list's
		// prefix, so that none reaches outside it).
		return nil, metav1.ListMeta{}, errBadRequest("continue key is not valid: %s", "invalid token")
	}
	opts := storage.ListOptions{StartKey: lq.continueKey, Revision: lq.continueRev}
	if opts.Revision == 0 && lq.rvMatch == string(metav1.ResourceVersionMatchExact) && lq.resourceVersion != "" {
		rev, err := strconv.ParseInt(lq.resourceVersion, 10, 64)
		if err != nil || rev < 0 { // upstream parses it unsigned
			return nil, metav1.ListMeta{}, errBadRequest("invalid resourceVersion %q", lq.resourceVersion)
		}
		opts.Revision = rev
	}
	var out []runtime.Object
	var lm metav1.ListMeta
	for {
		if lq.limit > 0 {
			opts.Limit = lq.limit - int64(len(out))
		}
		page, err := s.store.List(ctx, prefix, opts)
		if err != nil {
			return nil, lm, listError(err, lq)
		}
		opts.Revision = page.Revision
		objs, err := layout.DecodeAll(ctx, res, page.Items)
		if err != nil {
			return nil, lm, err
		}
		for _, obj := range objs {
			if lq.filter.matches(obj) {
				out = append(out, obj)
			}
		}
		lm.ResourceVersion = strconv.FormatInt(page.Revision, 10)
		if !page.More {
			return out, lm, nil
		}
		next := page.Items[len(page.Items)-1].Key + "\x00"
		if lq.limit > 0 && int64(len(out)) >= lq.limit {
			lm.Continue = encodeContinue(next, page.Revision)
			if lq.filter.empty() {
				rc := page.RemainingCount
				lm.RemainingItemCount = &rc
			}
			return out, lm, nil
		}
		opts.StartKey = next
	}
}

func listError(err error, lq *listQuery) error {
	if errors.Is(err, storage.ErrCompacted) {
		if lq.continueKey != "" {
			return apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
		}
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s", lq.resourceVersion))
	}
	if errors.Is(err, storage.ErrFutureRevision) {
		return apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %s", lq.resourceVersion), 1)
	}
	return err
}

type continueToken struct {
	APIVersion string `json:"v"`
	RV         int64  `json:"rv"`
	Start      string `json:"start"`
}

func encodeContinue(key string, rev int64) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", RV: rev, Start: key})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (string, int64, error) {
	data, err := base64.RawURLEncoding.DecodeString(s)
	var tok continueToken
	if err == nil {
		err = json.Unmarshal(data, &tok)
	}
	if err != nil || tok.APIVersion != "meta.k8s.io/v1" || tok.RV <= 0 {
		return "", 0, errBadRequest("continue key is not valid: %s", "invalid token")
	}
	return tok.Start, tok.RV, nil
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

// parseBool reads one value of a boolean query parameter as queryBool, ""
// being an absent one.
func parseBool(v string) bool {
	return v != "" && queryBool([]string{v})
}
