package ownerreferencespermissionenforcement

import (
	"context"
	"reflect"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
)

// mapper knows pods and configmaps (core/v1), replicasets (apps v1 and
// extensions v1beta1), and nodes (cluster-scoped).
func mapper() RESTMapper {
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Version: "v1"}, {Group: "apps", Version: "v1"}, {Group: "extensions", Version: "v1beta1"}})
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Node"}, meta.RESTScopeRoot)
	m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Group: "extensions", Version: "v1beta1", Kind: "ReplicaSet"}, meta.RESTScopeNamespace)
	return m
}

// authz allows a user by name: "super" everything, "finalizer" updates of
// finalizers of anything, "rs-finalizer" updates of replicasets/finalizers
// (any group), "node-finalizer" of nodes/finalizers, "deleter" deletes, and
// refuses the rest with reason "no". It records what it was asked.
type authz struct {
	asked []admission.AuthorizationAttributes
}

func (z *authz) Authorize(_ context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
	z.asked = append(z.asked, a)
	u := a.User.Username
	ok := u == "super" ||
		(strings.Contains(u, "deleter") && a.Verb == "delete") ||
		(strings.Contains(u, "finalizer") && a.Verb == "update" && a.Subresource == "finalizers" &&
			(u == "finalizer" || (strings.HasPrefix(u, "rs-") && a.Resource == "replicasets") || (strings.HasPrefix(u, "node-") && a.Resource == "nodes")))
	if ok {
		return admission.AuthorizationAllow, "", nil
	}
	return admission.AuthorizationNoOpinion, "no", nil
}

func ref(apiVersion, kind, uid string, block *bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "owner", UID: types.UID("uid-" + uid), BlockOwnerDeletion: block}
}

func pod(refs ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", OwnerReferences: refs}}
}

const (
	cantDelete   = `pods "p" is forbidden: cannot set an ownerRef on a resource you can't delete: no, <nil>`
	cantFinalize = `pods "p" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: no, <nil>`
)

func TestValidate(t *testing.T) {
	rs := func(uid string, block *bool) metav1.OwnerReference { return ref("apps/v1", "ReplicaSet", uid, block) }
	yes, no := ptr.To(true), ptr.To(false)
	cases := []struct {
		name        string
		user        string
		op          admission.Operation
		subresource string
		obj, old    runtime.Object
		wantErr     string
	}{
		{"create without refs", "nobody", admission.Create, "", pod(), nil, ""},
		{"create with a ref", "nobody", admission.Create, "", pod(rs("1", nil)), nil, ""},
		{"create with a non-blocking ref", "nobody", admission.Create, "", pod(rs("1", no)), nil, ""},
		{"create with a blocking ref", "nobody", admission.Create, "", pod(rs("1", yes)), nil, cantFinalize},
		{"create with a blocking ref, finalizer of anything", "finalizer", admission.Create, "", pod(rs("1", yes)), nil, ""},
		{"create with a blocking ref, finalizer of replicasets", "rs-finalizer", admission.Create, "", pod(rs("1", yes)), nil, ""},
		{"create with a blocking ref to a node, node finalizer", "node-finalizer", admission.Create, "", pod(ref("v1", "Node", "n", yes)), nil, ""},
		{"create with a blocking ref to an unknown kind", "nobody", admission.Create, "", pod(ref("example.com/v1", "Widget", "1", yes)), nil,
			`pods "p" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example.com/v1 Kind Widget: no matches for kind "Widget" in version "example.com/v1"`},
		{"create with a blocking ref with a bad apiVersion", "nobody", admission.Create, "", pod(ref("a/b/c", "Widget", "1", yes)), nil,
			`pods "p" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion a/b/c Kind Widget: unexpected GroupVersion string: a/b/c`},
		{"create with a blocking ref without apiVersion", "nobody", admission.Create, "", pod(ref("", "ReplicaSet", "1", yes)), nil,
			`pods "p" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion  Kind ReplicaSet: no matches for /, Resource=ReplicaSet`},
		{"update without change", "nobody", admission.Update, "", pod(rs("1", nil)), pod(rs("1", nil)), ""},
		{"update adding a ref, no delete", "nobody", admission.Update, "", pod(rs("1", nil)), pod(), cantDelete},
		{"update adding a ref, delete", "deleter", admission.Update, "", pod(rs("1", nil)), pod(), ""},
		{"update removing a ref, no delete", "nobody", admission.Update, "", pod(), pod(rs("1", nil)), cantDelete},
		{"update reordering refs, no delete", "nobody", admission.Update, "", pod(rs("1", nil), rs("2", nil)), pod(rs("2", nil), rs("1", nil)), cantDelete},
		{"update making a ref block, delete only", "deleter", admission.Update, "", pod(rs("1", yes)), pod(rs("1", nil)), cantFinalize},
		{"update making a ref block from false, delete only", "deleter", admission.Update, "", pod(rs("1", yes)), pod(rs("1", no)), cantFinalize},
		{"update making a ref block, delete and finalize", "rs-finalizer-deleter", admission.Update, "", pod(rs("1", yes)), pod(rs("1", nil)), ""},
		{"update unblocking a ref, delete only", "deleter", admission.Update, "", pod(rs("1", no)), pod(rs("1", yes)), ""},
		{"update keeping a blocking ref, adding another non-blocking", "deleter", admission.Update, "", pod(rs("1", yes), rs("2", nil)), pod(rs("1", yes)), ""},
		{"update renaming a blocking ref's kind, same uid", "deleter", admission.Update, "", pod(ref("v1", "ConfigMap", "1", yes)), pod(rs("1", yes)), ""},
		{"pods/status is skipped", "nobody", admission.Update, "status", pod(rs("1", yes)), pod(), ""},
		{"other status subresource is checked", "nobody", admission.Update, "ephemeralcontainers", pod(rs("1", yes)), pod(),
			`pods "p" is forbidden: cannot set an ownerRef on a resource you can't delete: no, <nil>`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Name: "p", Namespace: "ns", Operation: tc.op, Subresource: tc.subresource,
				Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Object: tc.obj, OldObject: tc.old,
				UserInfo: authenticationv1.UserInfo{Username: tc.user}, Record: &admission.Record{}}
			err := New(&authz{}, mapper()).Validate(context.Background(), a)
			if got := errString(err); got != tc.wantErr {
				t.Fatalf("Validate = %q, want %q", got, tc.wantErr)
			}
		})
	}
}

// TestChecks pins the authorization records, in order.
func TestChecks(t *testing.T) {
	user := authenticationv1.UserInfo{Username: "rs-finalizer-deleter"}
	a := &admission.Attributes{Name: "p", Namespace: "ns", Operation: admission.Update, Subresource: "",
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Record: &admission.Record{},
		Object: pod(ref("apps/v1", "ReplicaSet", "1", ptr.To(true)), ref("v1", "Node", "2", ptr.To(false))), OldObject: pod(),
		UserInfo: user}
	z := &authz{}
	err := New(z, mapper()).Validate(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	want := []admission.AuthorizationAttributes{
		{User: user, Verb: "delete", Namespace: "ns", APIVersion: "v1", Resource: "pods", Name: "p", ResourceRequest: true},
		{User: user, Verb: "update", APIGroup: "*", APIVersion: "*", Resource: "*", Subresource: "finalizers", Name: "*", ResourceRequest: true},
		{User: user, Verb: "update", APIGroup: "apps", APIVersion: "v1", Resource: "replicasets", Subresource: "finalizers", Name: "owner", Namespace: "ns", ResourceRequest: true},
	}
	if !reflect.DeepEqual(z.asked, want) {
		t.Errorf("asked\n%+v\nwant\n%+v", z.asked, want)
	}
}

func TestRegister(t *testing.T) {
	r := admission.NewRegistry()
	Register(r)
	for _, tc := range []struct {
		pc   admission.PluginContext
		want string
	}{
		{admission.PluginContext{Schema: schemaWithMapper{}}, `couldn't init admission plugin "OwnerReferencesPermissionEnforcement": missing authorizer`},
		{admission.PluginContext{Authorizer: &authz{}}, `couldn't init admission plugin "OwnerReferencesPermissionEnforcement": missing restMapper`},
		{admission.PluginContext{Authorizer: &authz{}, Schema: schemaWithMapper{}}, ""},
	} {
		_, err := r.NewChain([]string{Name}, tc.pc, nil)
		if got := errString(err); got != tc.want {
			t.Errorf("NewChain = %q, want %q", got, tc.want)
		}
	}
}

type schemaWithMapper struct {
	admission.Schema
	RESTMapper
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// failingMapper fails the test when asked: a user who may finalize
// anything never needs a kind mapped (upstream's hanging-mapper case).
type failingMapper struct{ t *testing.T }

func (m failingMapper) RESTMappings(gk schema.GroupKind, _ ...string) ([]*meta.RESTMapping, error) {
	m.t.Errorf("RESTMappings(%v) called", gk)
	return nil, nil
}

func TestFinalizeAnythingSkipsMapping(t *testing.T) {
	a := &admission.Attributes{Name: "p", Namespace: "ns", Operation: admission.Create, Record: &admission.Record{},
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"},
		Object:   pod(ref("v1", "Node", "1", ptr.To(true))), UserInfo: authenticationv1.UserInfo{Username: "finalizer"}}
	if err := New(&authz{}, failingMapper{t}).Validate(context.Background(), a); err != nil {
		t.Errorf("Validate = %v, want nil", err)
	}
}
