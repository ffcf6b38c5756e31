package clustertrustbundleattest

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1alpha1 "k8s.io/api/certificates/v1alpha1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
)

// allow allows attest on the signers named, and nothing else.
func allow(names ...string) admission.Authorizer {
	return admission.AuthorizerFunc(func(_ context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
		for _, n := range names {
			if a.Verb == "attest" && a.Resource == "signers" && a.APIGroup == "certificates.k8s.io" && a.Name == n {
				return admission.AuthorizationAllow, "", nil
			}
		}
		return admission.AuthorizationNoOpinion, "", nil
	})
}

func bundle(signer string, edit ...func(*certificatesv1.ClusterTrustBundle)) *certificatesv1.ClusterTrustBundle {
	b := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "b", ResourceVersion: "5"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: "pem"}}
	for _, e := range edit {
		e(b)
	}
	return b
}

const denied = `clustertrustbundles.certificates.k8s.io "b" is forbidden: user not permitted to attest for signerName "example.com/a"`

func TestValidate(t *testing.T) {
	res := func(v string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "certificates.k8s.io", Version: v, Resource: "clustertrustbundles"}
	}
	gcOnly := func(b *certificatesv1.ClusterTrustBundle) {
		b.OwnerReferences = []metav1.OwnerReference{{Name: "o", UID: "u", BlockOwnerDeletion: ptr.To(true)}}
		b.Finalizers = []string{"f"}
		b.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}}
	}
	cases := []struct {
		name     string
		authz    admission.Authorizer
		enabled  bool
		op       admission.Operation
		resource schema.GroupVersionResource
		obj, old runtime.Object
		wantErr  string
	}{
		{"create allowed by name", allow("example.com/a"), true, admission.Create, res("v1"), bundle("example.com/a"), nil, ""},
		{"create allowed by wildcard", allow("example.com/*"), true, admission.Create, res("v1"), bundle("example.com/a"), nil, ""},
		{"create denied", allow("other.com/*"), true, admission.Create, res("v1"), bundle("example.com/a"), nil, denied},
		{"gate off", allow(), false, admission.Create, res("v1"), bundle("example.com/a"), nil, ""},
		{"no signer name", allow(), true, admission.Create, res("v1"), bundle(""), nil, ""},
		{"v1beta1 denied", allow(), true, admission.Create, res("v1beta1"),
			&certificatesv1beta1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: certificatesv1beta1.ClusterTrustBundleSpec{SignerName: "example.com/a"}}, nil, denied},
		{"v1alpha1 denied", allow(), true, admission.Create, res("v1alpha1"),
			&certificatesv1alpha1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: certificatesv1alpha1.ClusterTrustBundleSpec{SignerName: "example.com/a"}}, nil, denied},
		{"update of trust bundle denied", allow(), true, admission.Update, res("v1"),
			bundle("example.com/a", func(b *certificatesv1.ClusterTrustBundle) { b.Spec.TrustBundle = "other" }), bundle("example.com/a"), denied},
		{"update of labels denied", allow(), true, admission.Update, res("v1"),
			bundle("example.com/a", func(b *certificatesv1.ClusterTrustBundle) { b.Labels = map[string]string{"a": "b"} }), bundle("example.com/a"), denied},
		{"update of GC fields only", allow(), true, admission.Update, res("v1"), bundle("example.com/a", gcOnly), bundle("example.com/a"), ""},
		{"update removing GC fields only", allow(), true, admission.Update, res("v1"), bundle("example.com/a"), bundle("example.com/a", gcOnly), ""},
		{"update of GC fields with type meta on one side", allow(), true, admission.Update, res("v1"),
			bundle("example.com/a", gcOnly, func(b *certificatesv1.ClusterTrustBundle) {
				b.APIVersion, b.Kind = "certificates.k8s.io/v1", "ClusterTrustBundle"
			}),
			bundle("example.com/a"), ""},
		{"update allowed", allow("example.com/a"), true, admission.Update, res("v1"),
			bundle("example.com/a", func(b *certificatesv1.ClusterTrustBundle) { b.Spec.TrustBundle = "other" }), bundle("example.com/a"), ""},
		{"other resource", allow(), true, admission.Create, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, &corev1.Pod{}, nil, ""},
		{"wrong type names the old object", allow(), true, admission.Create, res("v1"), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, nil,
			`clustertrustbundles.certificates.k8s.io "b" is forbidden: expected type ClusterTrustBundle, got: <nil>`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Name: "b", Resource: tc.resource, Operation: tc.op, Object: tc.obj, OldObject: tc.old,
				UserInfo: authenticationv1.UserInfo{Username: "alice"}, Record: &admission.Record{}}
			err := New(tc.authz, tc.enabled).Validate(context.Background(), a)
			if got := errString(err); got != tc.wantErr {
				t.Fatalf("Validate = %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func TestRegister(t *testing.T) {
	r := admission.NewRegistry()
	Register(r)
	want := `couldn't init admission plugin "ClusterTrustBundleAttest": ClusterTrustBundleAttest requires an authorizer`
	if _, err := r.NewChain([]string{Name}, admission.PluginContext{}, nil); err == nil || err.Error() != want {
		t.Errorf("NewChain without authorizer = %v, want %q", err, want)
	}
	// With the gate off (it is on by default in 1.37) the plugin admits
	// everything.
	c, err := r.NewChain([]string{Name}, admission.PluginContext{Authorizer: allow(), Features: gatesOff{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &admission.Attributes{Name: "b", Operation: admission.Create, Object: bundle("example.com/a"), Record: &admission.Record{},
		Resource: schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "clustertrustbundles"}}
	if err := c.Validate(context.Background(), a); err != nil {
		t.Errorf("Validate with the gate off = %v, want nil", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// gatesOff turns every feature gate off.
type gatesOff struct{}

func (gatesOff) Enabled(string) bool { return false }
