package certificateapproval

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// allow allows verb on the signers named, and nothing else.
func allow(verb string, names ...string) admission.Authorizer {
	return admission.AuthorizerFunc(func(_ context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
		for _, n := range names {
			if a.Verb == verb && a.Resource == "signers" && a.APIGroup == "certificates.k8s.io" && a.Name == n {
				return admission.AuthorizationAllow, "", nil
			}
		}
		return admission.AuthorizationNoOpinion, "", nil
	})
}

func csr(signer string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "req"},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer}}
}

var csrResource = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}

func TestValidate(t *testing.T) {
	cases := []struct {
		name        string
		authz       admission.Authorizer
		resource    schema.GroupVersionResource
		subresource string
		obj, old    runtime.Object
		wantErr     string
	}{
		{"allowed by signer name", allow("approve", "example.com/a"), csrResource, "approval", csr("example.com/a"), csr("example.com/a"), ""},
		{"allowed by domain wildcard", allow("approve", "example.com/*"), csrResource, "approval", csr("example.com/a"), csr("example.com/a"), ""},
		{"denied", allow("approve", "other.com/*"), csrResource, "approval", csr("example.com/a"), csr("example.com/a"),
			`certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to approve requests with signerName "example.com/a"`},
		{"sign permission is not approve permission", allow("sign", "example.com/a"), csrResource, "approval", csr("example.com/a"), csr("example.com/a"),
			`certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to approve requests with signerName "example.com/a"`},
		{"the old signer name is checked", allow("approve", "example.com/new"), csrResource, "approval", csr("example.com/new"), csr("example.com/old"),
			`certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to approve requests with signerName "example.com/old"`},
		{"status subresource is not checked", allow("none"), csrResource, "status", csr("example.com/a"), csr("example.com/a"), ""},
		{"main resource is not checked", allow("none"), csrResource, "", csr("example.com/a"), csr("example.com/a"), ""},
		{"other resource is not checked", allow("none"), schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "approval", csr("example.com/a"), csr("example.com/a"), ""},
		{"wrong old type", allow("approve", "example.com/a"), csrResource, "approval", csr("example.com/a"), &corev1.Pod{},
			`certificatesigningrequests.certificates.k8s.io "req" is forbidden: expected type CertificateSigningRequest, got: *core.Pod`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Name: "req", Resource: tc.resource, Subresource: tc.subresource, Operation: admission.Update,
				Object: tc.obj, OldObject: tc.old, UserInfo: authenticationv1.UserInfo{Username: "alice"}, Record: &admission.Record{}}
			err := New(tc.authz).Validate(context.Background(), a)
			if got := errString(err); got != tc.wantErr {
				t.Fatalf("Validate = %q, want %q", got, tc.wantErr)
			}
			if err != nil && !apierrors.IsForbidden(err) {
				t.Errorf("Validate = %v, want a Forbidden status", err)
			}
		})
	}
}

func TestHandles(t *testing.T) {
	p := New(allow("none"))
	for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Delete, admission.Connect} {
		if got, want := p.Handles(op), op == admission.Update; got != want {
			t.Errorf("Handles(%s) = %v, want %v", op, got, want)
		}
	}
}

func TestRegisterNeedsAuthorizer(t *testing.T) {
	r := admission.NewRegistry()
	Register(r)
	want := `couldn't init admission plugin "CertificateApproval": CertificateApproval requires an authorizer`
	if _, err := r.NewChain([]string{Name}, admission.PluginContext{}, nil); err == nil || err.Error() != want {
		t.Errorf("NewChain without authorizer = %v, want %q", err, want)
	}
	if _, err := r.NewChain([]string{Name}, admission.PluginContext{Authorizer: allow("none")}, nil); err != nil {
		t.Errorf("NewChain with an authorizer = %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
