package apiserver

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
)

// serveConnect admits a connect request (pods/exec, attach, portforward,
// proxy, and nodes/ and services/proxy) as CONNECT, before looking at the
// object as upstream does, and then answers as kubelet.go says.
func (s *Server) serveConnect(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	if _, ok := r.URL.Query()["dryRun"]; ok {
		writeError(w, r, apierrors.NewBadRequest("dryRun is not supported"))
		return
	}
	sub, _ := res.Subresource(rq.info.Subresource)
	opts, err := connectOptions(r, sub.Kind)
	if err != nil {
		writeError(w, r, err)
		return
	}
	attrs := s.attributes(rq, res, admission.Connect, rq.info.Name, opts, nil, nil, false)
	if err := s.admit(r.Context(), attrs); err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.validate(r.Context(), attrs); err != nil {
		writeError(w, r, err)
		return
	}
	name := rq.info.Name
	if rq.info.Subresource == "proxy" {
		// a proxy's name may carry a scheme and a port:
		// [scheme:]name[:port], as upstream's ResourceLocations read it
		_, target, port, ok := utilnet.SplitSchemeNamePort(name)
		switch {
		case !ok:
			writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("invalid %s request %q", res.Singular, name)))
			return
		case res.Group == "" && res.Resource == "services":
			writeError(w, r, s.serviceProxyError(r.Context(), rq.info.Namespace, target, port))
			return
		}
		name = target
	}
	obj, err := s.getObject(r.Context(), res, rq.info.Namespace, name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeError(w, r, s.connectBackendError(r, rq, res, obj))
}

// connectOptions decodes the options object of a connect request (e.g.
// PodExecOptions) from its query, keeping only the fields of that kind.
func connectOptions(r *http.Request, gvk schema.GroupVersionKind) (runtime.Object, error) {
	obj, err := registry.Scheme().New(gvk)
	if err != nil {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u, nil
	}
	if err := decodeQuery(r.URL.Query(), obj); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}
