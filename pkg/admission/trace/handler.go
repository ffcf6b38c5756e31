package trace

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Path is where an admitd server serves its traces: GET Path lists them,
// GET Path/<audit-id> returns one. RBAC grants them as non-resource URLs
// (see ClusterRoleRules).
const Path = "/admission/traces"

// ClusterRoleRules is the rule a ClusterRole needs to read traces, as YAML.
const ClusterRoleRules = `- nonResourceURLs: ["/admission/traces", "/admission/traces/*"]
  verbs: ["get"]`

// Handler serves r under Path: the list (query parameters user, resource,
// namespace, decision and limit) and single traces by audit ID. JSON by
// default; the readable tree when the client accepts text/plain first or
// asks ?output=tree. It does no authentication or authorization: mount it
// behind the server's.
func Handler(r *Ring) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			writeStatus(w, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "admission/traces"}, strings.ToLower(req.Method)))
			return
		}
		id := strings.Trim(strings.TrimPrefix(req.URL.Path, Path), "/")
		tree := wantsTree(req)
		if id != "" {
			e := r.Get(id)
			if e == nil {
				writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Group: "admission.admitd.io", Resource: "traces"}, id))
				return
			}
			writeTraces(w, []*Entry{e}, tree, false)
			return
		}
		f, err := filterOf(req)
		if err != nil {
			writeStatus(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		writeTraces(w, r.List(f), tree, true)
	})
}

func filterOf(req *http.Request) (Filter, error) {
	q := req.URL.Query()
	f := Filter{User: q.Get("user"), Resource: q.Get("resource"), Namespace: q.Get("namespace"), Decision: q.Get("decision")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, fmt.Errorf("limit must be a non-negative integer, got %q", v)
		}
		f.Limit = n
	}
	switch {
	case f.Decision == "", strings.EqualFold(f.Decision, Allowed), strings.EqualFold(f.Decision, Denied), strings.EqualFold(f.Decision, Error):
	default:
		return f, fmt.Errorf("decision must be Allowed, Denied or Error, got %q", f.Decision)
	}
	return f, nil
}

func wantsTree(req *http.Request) bool {
	if o := req.URL.Query().Get("output"); o != "" {
		return o == "tree" || o == "text"
	}
	return strings.HasPrefix(req.Header.Get("Accept"), "text/plain")
}

func writeTraces(w http.ResponseWriter, entries []*Entry, tree, list bool) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if tree {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for i, e := range entries {
			if i > 0 {
				_, _ = w.Write([]byte("\n"))
			}
			_ = Render(w, e.Trace())
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	var v any
	if list {
		l := List{APIVersion: APIVersion, Kind: ListKind, Items: make([]Trace, 0, len(entries))}
		for _, e := range entries {
			l.Items = append(l.Items, *e.Trace())
		}
		v = l
	} else {
		v = entries[0].Trace()
	}
	_ = json.NewEncoder(w).Encode(v)
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.ErrStatus
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
}
