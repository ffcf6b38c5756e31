package apiserver

import (
	"context"
	"encoding/json"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
)

// Creates that store nothing of their own kind: a pod binding (pods/binding
// and the legacy bindings resource), an eviction (pods/eviction) and a token
// request (serviceaccounts/token). As upstream's create handler, the body is
// decoded as the subresource's kind, mutating admission runs on it (CREATE,
// kind Binding, Eviction or TokenRequest), and the REST implementation then
// calls validating admission where upstream calls createValidation.

// subCreate performs one such create on the admitted body.
type subCreate func(ctx context.Context, c *subCreateCall) (runtime.Object, error)

// subCreateCall is one create on a subresource.
type subCreateCall struct {
	s   *Server
	rq  *request
	res *registry.Resource // the resource addressed: pods, serviceaccounts, bindings
	// name is the name in the URL, or the body's for the bindings
	// resource.
	name  string
	obj   runtime.Object // the body, after mutating admission
	opts  *metav1.CreateOptions
	attrs *admission.Attributes
}

// validate runs validating admission on obj.
func (c *subCreateCall) validate(ctx context.Context, obj runtime.Object) error {
	a := *c.attrs
	a.Object = obj
	return c.s.validate(ctx, &a)
}

func (c *subCreateCall) dryRun() bool { return len(c.opts.DryRun) > 0 }

type subKey struct{ group, resource, subresource string }

var subCreates = map[subKey]subCreate{
	{"", "bindings", ""}:             createBinding,
	{"", "pods", "binding"}:          createBinding,
	{"", "pods", "eviction"}:         createEviction,
	{"", "serviceaccounts", "token"}: createToken,
}

// serveSubCreate serves a create handled by subCreates; it reports false
// for any other create.
func (s *Server) serveSubCreate(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) bool {
	h, ok := subCreates[subKey{res.Group, res.Resource, rq.info.Subresource}]
	if !ok {
		return false
	}
	out, err := s.subCreate(r, rq, res, h)
	if err != nil {
		writeError(w, r, err)
		return true
	}
	if st, ok := out.(*metav1.Status); ok {
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		if st.Code == 0 {
			st.Code = http.StatusCreated
		}
	}
	rq.event.ResponseObject = out
	writeObject(w, r, http.StatusCreated, out)
	return true
}

func (s *Server) subCreate(r *http.Request, rq *request, res *registry.Resource, h subCreate) (runtime.Object, error) {
	opts, err := parseCreateOptions(r)
	if err != nil {
		return nil, err
	}
	obj, err := s.decodeSubresourceBody(r, rq, res, opts.FieldValidation)
	if err != nil {
		return nil, err
	}
	defaultTokenRequest(obj)
	m := accessor(obj)
	name := rq.info.Name
	if name == "" {
		name = m.GetName()
	}
	s.keepRequestObject(rq, obj)
	if !keepsRequestSystemFields(rq.info.Subresource) {
		wipeSystemFields(m)
	}
	if err := ensureNamespace(rq.info.Namespace, m); err != nil {
		return nil, err
	}
	dedupOwnerReferences(obj, rq.record, false)
	obj = s.recordSubresourceCreate(rq, res, obj, opts.FieldManager)
	attrs := s.attributes(rq, res, admission.Create, name, obj, nil, opts, len(opts.DryRun) > 0)
	if rq.info.Subresource == "" {
		attrs.Kind = res.GroupVersionKind()
	}
	if err := s.admit(r.Context(), attrs); err != nil {
		return nil, err
	}
	c := &subCreateCall{s: s, rq: rq, res: res, name: name, obj: attrs.Object, opts: opts, attrs: attrs}
	return h(r.Context(), c)
}

// keepsRequestSystemFields: a token request and a pod binding keep the uid
// (and the other fields a create may not set) their client sent, as
// upstream's TokenREST and BindingREST ask (a binding's uid and
// resourceVersion are preconditions); an eviction and a create of the
// bindings resource have them cleared before admission.
func keepsRequestSystemFields(subresource string) bool {
	return subresource == "token" || subresource == "binding"
}

// decodeSubresourceBody decodes the body as the kind the subresource takes
// (for the bindings resource, its own kind). An Eviction may also come as
// policy/v1beta1, whose fields are those of policy/v1.
func (s *Server) decodeSubresourceBody(r *http.Request, rq *request, res *registry.Resource, fieldValidation string) (runtime.Object, error) {
	gvk := res.GroupVersionKind()
	if sub, ok := res.Subresource(rq.info.Subresource); ok {
		gvk = sub.Kind
	}
	data, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	mt := mediaTypeOf(r)
	target := gvk
	if gvk.Kind == "Eviction" && mt != mediaProtobuf && bodyAPIVersion(data) == "policy/v1beta1" {
		target = schema.GroupVersionKind{Group: "policy", Version: "v1beta1", Kind: "Eviction"}
	}
	kindRes := &registry.Resource{GroupVersionResource: target.GroupVersion().WithResource(""), Kind: target.Kind}
	obj, strictErrs, err := decodeObject(kindRes, mt, data)
	if err != nil {
		return nil, err
	}
	if err := strictDecoding(rq, fieldValidation, strictErrs); err != nil {
		return nil, cannotBeHandled(kindRes, err)
	}
	if target == gvk {
		return obj, nil
	}
	return convertByJSON(obj, gvk)
}

// bodyAPIVersion is the apiVersion of a JSON or YAML body ("" if unknown).
func bodyAPIVersion(data []byte) string {
	var tm metav1.TypeMeta
	if checkYAML(data) != nil {
		return ""
	}
	if err := yaml.Unmarshal(data, &tm); err == nil {
		return tm.APIVersion
	}
	return ""
}

// convertByJSON converts obj to gvk, a version with the same fields.
func convertByJSON(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	out, err := registry.Scheme().New(gvk)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}

// successStatus is the Status a binding or an eviction answers with.
func successStatus() *metav1.Status {
	return &metav1.Status{Status: metav1.StatusSuccess}
}
