package policies_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/apis/admissionregistration"
)

var update = flag.Bool("update", false, "rewrite the expected.yaml of every golden case")

// goldenCase is testdata/<case>/case.yaml: the objects that exist
// (namespaces, params, policies and bindings) and one request.
type goldenCase struct {
	Description string           `json:"description"`
	Objects     []map[string]any `json:"objects"`
	// NoDefaults skips the API defaulting of policies and bindings.
	NoDefaults bool `json:"noDefaults,omitempty"`
	// UpstreamUnordered says why upstream's outcome depends on an order
	// it leaves unspecified (admitd sorts), so that it cannot be compared.
	UpstreamUnordered string        `json:"upstreamUnordered,omitempty"`
	Request           goldenRequest `json:"request"`
}

type goldenRequest struct {
	Operation   admission.Operation         `json:"operation"`
	Resource    schema.GroupVersionResource `json:"resource"`
	SubResource string                      `json:"subResource,omitempty"`
	// Kind defaults to the object's (or old object's) apiVersion and kind.
	Kind      *schema.GroupVersionKind   `json:"kind,omitempty"`
	Namespace string                     `json:"namespace,omitempty"`
	Name      string                     `json:"name,omitempty"`
	Object    map[string]any             `json:"object,omitempty"`
	OldObject map[string]any             `json:"oldObject,omitempty"`
	User      *authenticationv1.UserInfo `json:"user,omitempty"`
	DryRun    bool                       `json:"dryRun,omitempty"`
}

// goldenResult is testdata/<case>/expected.yaml.
type goldenResult struct {
	Allowed     bool              `json:"allowed"`
	Status      *metav1.Status    `json:"status,omitempty"`
	Error       string            `json:"error,omitempty"`
	Warnings    []string          `json:"warnings,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// Object is the object after admission, when it was allowed and
	// mutating policies changed it.
	Object map[string]any `json:"object,omitempty"`
}

func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/case.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, file := range dirs {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			c := readCase(t, file)
			got := runCase(t, c)
			out, err := yaml.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(dir, "expected.yaml")
			if *update {
				if err := os.WriteFile(want, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			exp, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if string(exp) != string(out) {
				t.Errorf("%s: result differs from expected.yaml\n--- got\n%s\n--- want\n%s", c.Description, out, exp)
			}
		})
	}
}

func readCase(t *testing.T, file string) *goldenCase {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c := &goldenCase{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return c
}

// runCase runs the request through MutatingAdmissionPolicy (with the
// chain's reinvocation) and then ValidatingAdmissionPolicy.
func runCase(t *testing.T, c *goldenCase) goldenResult {
	t.Helper()
	store, snap := newObjectStore(), &policies.Snapshot{}
	for _, raw := range c.Objects {
		addObject(t, store, snap, raw, !c.NoDefaults)
	}
	o := policies.Options{Source: policies.StaticSource{Snapshot: snap}, Params: store, TypeConverters: widgetConverters}
	pc := admission.PluginContext{Namespaces: store, Schema: fakeSchema{}, Authorizer: denySecrets}
	m, err := policies.NewMutating(o, pc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := policies.NewValidating(o, pc)
	if err != nil {
		t.Fatal(err)
	}
	chain := admission.NewChain(
		admission.NamedPlugin{Name: policies.MutatingName, Plugin: m},
		admission.NamedPlugin{Name: policies.ValidatingName, Plugin: v},
	)
	a := c.Request.attributes(t)
	ctx := context.Background()
	err = chain.Admit(ctx, a)
	if err == nil {
		err = chain.Validate(ctx, a)
	}
	return result(t, a, err, c.Request.Object)
}

func result(t *testing.T, a *admission.Attributes, err error, original map[string]any) goldenResult {
	res := goldenResult{Allowed: err == nil, Warnings: a.Record.Warnings()}
	var se *apierrors.StatusError
	switch {
	case errors.As(err, &se):
		st := se.ErrStatus
		res.Status = &st
	case err != nil:
		res.Error = err.Error()
	}
	for _, an := range a.Record.Annotations(admission.LevelRequestResponse) {
		if res.Annotations == nil {
			res.Annotations = map[string]string{}
		}
		res.Annotations[an.Key] = an.Value
	}
	if err == nil && a.Object != nil {
		m, cerr := runtime.DefaultUnstructuredConverter.ToUnstructured(a.Object)
		if cerr != nil {
			t.Fatal(cerr)
		}
		unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
		if !equalJSON(t, m, original) {
			res.Object = m
		}
	}
	return res
}

func equalJSON(t *testing.T, a, b map[string]any) bool {
	x, err1 := yaml.Marshal(a)
	y, err2 := yaml.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return string(x) == string(y)
}

// addObject files one object of a case: policies and bindings into the
// snapshot (defaulted as the API would), everything else into the store.
func addObject(t *testing.T, store *objectStore, snap *policies.Snapshot, raw map[string]any, defaults bool) {
	t.Helper()
	obj := decode(t, raw)
	switch o := obj.(type) {
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		if defaults {
			admissionregistration.Default(o)
		}
		snap.ValidatingPolicies = append(snap.ValidatingPolicies, o)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		if defaults {
			admissionregistration.Default(o)
		}
		snap.ValidatingBindings = append(snap.ValidatingBindings, o)
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		if defaults {
			admissionregistration.Default(o)
		}
		snap.MutatingPolicies = append(snap.MutatingPolicies, o)
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		if defaults {
			admissionregistration.Default(o)
		}
		snap.MutatingBindings = append(snap.MutatingBindings, o)
	default:
		store.add(obj)
	}
}

// decode makes a built-in kind typed (as the server stores it) and leaves
// custom resources unstructured.
func decode(t *testing.T, raw map[string]any) runtime.Object {
	t.Helper()
	if raw == nil {
		return nil
	}
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(raw)}
	gvk := u.GroupVersionKind()
	if strings.HasSuffix(gvk.Group, "example.com") {
		return u
	}
	obj, err := clientgoscheme.Scheme.New(gvk)
	if err != nil {
		t.Fatalf("decoding %v: %v", gvk, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, obj, true); err != nil {
		t.Fatalf("decoding %v: %v", gvk, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj
}

func (r goldenRequest) attributes(t *testing.T) *admission.Attributes {
	a := &admission.Attributes{Name: r.Name, Namespace: r.Namespace, Resource: r.Resource, Subresource: r.SubResource,
		Operation: r.Operation, DryRun: r.DryRun, Object: decode(t, r.Object), OldObject: decode(t, r.OldObject),
		Record: admission.NewRecord()}
	switch {
	case r.Kind != nil:
		a.Kind = *r.Kind
	case a.Object != nil:
		a.Kind = a.Object.GetObjectKind().GroupVersionKind()
	case a.OldObject != nil:
		a.Kind = a.OldObject.GetObjectKind().GroupVersionKind()
	}
	a.Options = options(r.Operation)
	if r.User != nil {
		a.UserInfo = *r.User
	} else {
		a.UserInfo = authenticationv1.UserInfo{Username: "alice", Groups: []string{"devs", "system:authenticated"}}
	}
	return a
}

// options are the operation's options, as the server passes them.
func options(op admission.Operation) runtime.Object {
	tm := func(kind string) metav1.TypeMeta { return metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: kind} }
	switch op {
	case admission.Create:
		return &metav1.CreateOptions{TypeMeta: tm("CreateOptions")}
	case admission.Update:
		return &metav1.UpdateOptions{TypeMeta: tm("UpdateOptions")}
	case admission.Delete:
		return &metav1.DeleteOptions{TypeMeta: tm("DeleteOptions")}
	}
	return nil
}
