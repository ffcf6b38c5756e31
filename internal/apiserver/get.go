package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

func (s *Server) serveGet(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	if _, err := negotiateOutput(r, res); err != nil {
		writeError(w, r, err)
		return
	}
	if rq.info.Subresource == "scale" {
		s.serveGetScale(w, r, rq, res)
		return
	}
	if rq.info.Subresource == "log" && res.Group == "" && res.Resource == "pods" {
		s.servePodLog(w, r, rq, res)
		return
	}
	rev, err := checkGetOptions(r.URL.Query())
	if err == nil {
		err = s.waitForRevision(r.Context(), rev)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, err := s.getObject(r.Context(), res, rq.info.Namespace, rq.info.Name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.writeResult(w, r, http.StatusOK, res, obj)
}

// checkGetOptions reads a get's query as upstream's get handler does: the
// export parameter, gone since 1.14, is a 400 unless false; GetOptions
// that do not decode are a 400; a resourceVersion that does not parse is
// the storage's error (upstream answers it 500). It returns the revision
// asked for: the get waits until the store has reached it (as upstream's
// watch cache does), then serves the latest state.
func checkGetOptions(q url.Values) (int64, error) {
	if len(q) == 0 {
		return 0, nil
	}
	if queryBool(q["export"]) {
		return 0, apierrors.NewBadRequest("the export parameter, deprecated since v1.14, is no longer supported")
	}
	var opts metav1.GetOptions
	if err := metainternalscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &opts); err != nil {
		return 0, apierrors.NewBadRequest(err.Error())
	}
	return parseResourceVersion(opts.ResourceVersion)
}

// getObject reads one object, with a NotFound Status when it is missing.
func (s *Server) getObject(ctx context.Context, res *registry.Resource, namespace, name string) (runtime.Object, error) {
	_, obj, err := s.readStored(ctx, res, layout.Key(res, namespace, name), name)
	return obj, err
}

// readStored reads the object stored under key and its record, with a
// NotFound Status naming name when it is missing.
func (s *Server) readStored(ctx context.Context, res *registry.Resource, key, name string) (storage.KeyValue, runtime.Object, error) {
	kv, err := s.store.Get(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return kv, nil, errNotFound(res, name)
	}
	if err != nil {
		return kv, nil, err
	}
	obj, err := layout.DecodeContext(ctx, res, kv)
	return kv, obj, err
}

// writeResult writes an object, or what the client's Accept header asks
// it to be turned into (a Table, its metadata).
func (s *Server) writeResult(w http.ResponseWriter, r *http.Request, code int, res *registry.Resource, obj runtime.Object) {
	n, err := negotiateOutput(r, res)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out, err := s.transformObject(r, res, n, obj)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeNegotiated(w, r, code, n, out)
}

func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }
