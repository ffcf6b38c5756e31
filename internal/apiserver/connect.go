package apiserver

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
)

// serveConnect admits a connect request (pods/exec, attach, portforward,
// proxy) as CONNECT, before looking at the pod as upstream does, and then
// answers that no kubelet is attached.
func (s *Server) serveConnect(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	sub, _ := res.Subresource(rq.info.Subresource)
	opts := connectOptions(r, sub.Kind.GroupVersion().String(), sub.Kind.Kind)
	attrs := s.attributes(rq, res, admission.Connect, rq.info.Name, opts, nil, nil, false)
	if err := s.admit(r.Context(), attrs); err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.validate(r.Context(), attrs); err != nil {
		writeError(w, r, err)
		return
	}
	if _, err := s.getObject(r.Context(), res, rq.info.Namespace, rq.info.Name); err != nil {
		writeError(w, r, err)
		return
	}
	writeError(w, r, apierrors.NewBadRequest("Upgrade request required"))
}

// connectOptions builds the options object of a connect request from its
// query (e.g. PodExecOptions).
func connectOptions(r *http.Request, apiVersion, kind string) runtime.Object {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	for k, vs := range r.URL.Query() {
		switch k {
		case "command":
			list := make([]any, len(vs))
			for i, v := range vs {
				list[i] = v
			}
			u.Object[k] = list
		case "stdin", "stdout", "stderr", "tty":
			u.Object[k] = vs[0] == "true" || vs[0] == "1"
		default:
			u.Object[k] = vs[0]
		}
	}
	return u
}
