package evaluate

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/lint"
)

// Options are `admitd eval`'s inputs, as files.
type Options struct {
	// Files are the configuration: files and directories of YAML or JSON
	// objects, read as `admitd lint -f` reads them.
	Files []string
	// Request is the object file of the request, or an admission.k8s.io
	// AdmissionReview (v1 or v1beta1) whose request gives the operation,
	// user, objects, namespace, subresource, dry run and options.
	Request string
	// Old is the old object file (UPDATE, DELETE).
	Old string
	// Operation, User, Namespace, Name, Subresource and DryRun override
	// the AdmissionReview's when set.
	Operation   string
	User        User
	Namespace   string
	Name        string
	Subresource string
	DryRun      bool
	// Impersonator sends the request, impersonating User (Request's).
	Impersonator User
	// WebhookResponses is a recorded-responses file.
	WebhookResponses string
	Server           ServerConfig
}

// Load reads the files of o into an Input.
func Load(o Options) (Input, error) {
	var in Input
	var err error
	if in.Objects, err = LoadObjects(o.Files...); err != nil {
		return in, err
	}
	if o.Request == "" {
		return in, &ConfigError{Err: errors.New("a request is required (--request FILE)")}
	}
	if in.Request, err = LoadRequest(o.Request); err != nil {
		return in, err
	}
	if o.Old != "" {
		if in.Request.OldObject, err = loadOne(o.Old); err != nil {
			return in, err
		}
	}
	override(&in.Request, o)
	if o.WebhookResponses != "" {
		if in.Responses, err = LoadResponses(o.WebhookResponses); err != nil {
			return in, err
		}
	}
	in.Server = o.Server
	return in, nil
}

func override(q *Request, o Options) {
	if o.Operation != "" {
		q.Operation = strings.ToUpper(o.Operation)
	}
	if o.User.Name != "" {
		q.User = o.User
	}
	if o.Namespace != "" {
		q.Namespace = o.Namespace
	}
	if o.Name != "" {
		q.Name = o.Name
	}
	if o.Subresource != "" {
		q.Subresource = o.Subresource
	}
	if o.Impersonator.Name != "" {
		imp := o.Impersonator
		q.Impersonator = &imp
	}
	if o.DryRun {
		q.DryRun = true
	}
}

// LoadObjects reads every object of the files and directories.
func LoadObjects(paths ...string) ([]Object, error) {
	var out []Object
	err := lint.ReadObjects(func(u *unstructured.Unstructured, source string) error {
		out = append(out, Object{Unstructured: u, Source: source})
		return nil
	}, paths...)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return out, nil
}

func loadOne(path string) (*unstructured.Unstructured, error) {
	objs, err := LoadObjects(path)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, &ConfigError{Err: fmt.Errorf("%s holds %d objects; one is needed", path, len(objs))}
	}
	return objs[0].Unstructured, nil
}

// LoadRequest reads a request file: one object (a CREATE of it), or an
// AdmissionReview.
func LoadRequest(path string) (Request, error) {
	u, err := loadOne(path)
	if err != nil {
		return Request{}, err
	}
	if u.GetKind() != "AdmissionReview" || u.GroupVersionKind().Group != "admission.k8s.io" {
		return Request{Object: u}, nil
	}
	q, err := FromReview(u.Object)
	if err != nil {
		return q, &ConfigError{Err: fmt.Errorf("%s: %w", path, err)}
	}
	return q, nil
}

// FromReview is the request of an AdmissionReview.
func FromReview(review map[string]any) (Request, error) {
	r, ok := review["request"].(map[string]any)
	if !ok {
		return Request{}, errors.New("the AdmissionReview has no request")
	}
	q := Request{Operation: str(r["operation"]), Namespace: str(r["namespace"]), Subresource: str(r["subResource"])}
	q.DryRun, _ = r["dryRun"].(bool)
	q.Options, _ = r["options"].(map[string]any)
	delete(q.Options, "apiVersion")
	delete(q.Options, "kind")
	q.Object = object(r["object"])
	q.OldObject = object(r["oldObject"])
	if res, ok := r["resource"].(map[string]any); ok && str(res["resource"]) != "" {
		q.Resource = &schema.GroupVersionResource{Group: str(res["group"]), Version: str(res["version"]), Resource: str(res["resource"])}
	}
	if q.Operation == Delete && q.Object == nil {
		// the stored object: its kind, name and namespace are enough
		q.Object, q.OldObject = q.OldObject, nil
		if q.Object == nil {
			q.Object = stub(r["kind"], str(r["name"]), q.Namespace)
		}
	}
	if q.Object == nil {
		return q, errors.New("the AdmissionReview's request has no object (nor, for a DELETE, oldObject or kind and name)")
	}
	if q.Operation == Connect {
		// the object is the options object; the name is the pod's, node's or service's
		q.Name = str(r["name"])
	} else if n := str(r["name"]); n != "" && q.Object.GetName() == "" {
		q.Object.SetName(n)
	}
	q.User = userOf(r["userInfo"])
	return q, nil
}

// stub is an object of the AdmissionReview kind (group, version, kind)
// with a name and namespace; nil without a kind.
func stub(kind any, name, ns string) *unstructured.Unstructured {
	k, _ := kind.(map[string]any)
	if str(k["kind"]) == "" {
		return nil
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: str(k["group"]), Version: str(k["version"]), Kind: str(k["kind"])})
	u.SetName(name)
	u.SetNamespace(ns)
	return u
}

func userOf(v any) User {
	m, _ := v.(map[string]any)
	u := User{Name: str(m["username"]), UID: str(m["uid"])}
	for _, g := range list(m["groups"]) {
		u.Groups = append(u.Groups, str(g))
	}
	if extra, ok := m["extra"].(map[string]any); ok {
		u.Extra = map[string][]string{}
		for k, vs := range extra {
			for _, v := range list(vs) {
				u.Extra[k] = append(u.Extra[k], str(v))
			}
		}
	}
	return u
}

func object(v any) *unstructured.Unstructured {
	if m, ok := v.(map[string]any); ok && len(m) > 0 {
		return &unstructured.Unstructured{Object: m}
	}
	return nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}
