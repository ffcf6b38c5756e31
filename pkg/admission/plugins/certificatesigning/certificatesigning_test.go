package certificatesigning

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
		return admission.AuthorizationDeny, "", nil
	})
}

type csrOpt func(*certificatesv1.CertificateSigningRequest)

func csr(signer string, opts ...csrOpt) *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "req"},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func cert(b []byte) csrOpt {
	return func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = b }
}

func condition(typ certificatesv1.RequestConditionType) csrOpt {
	return func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: typ, Status: corev1.ConditionTrue})
	}
}

var csrResource = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}

const denied = `certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to sign requests with signerName `

func TestValidate(t *testing.T) {
	cases := []struct {
		name        string
		authz       admission.Authorizer
		subresource string
		obj, old    runtime.Object
		wantErr     string
	}{
		{"certificate set, allowed by name", allow("sign", "example.com/a"), "status", csr("example.com/a", cert([]byte("c"))), csr("example.com/a"), ""},
		{"certificate set, allowed by wildcard", allow("sign", "example.com/*"), "status", csr("example.com/a", cert([]byte("c"))), csr("example.com/a"), ""},
		{"certificate set, denied", allow("approve", "example.com/a"), "status", csr("example.com/a", cert([]byte("c"))), csr("example.com/a"), denied + `"example.com/a"`},
		{"certificate changed, denied", allow("sign"), "status", csr("example.com/a", cert([]byte("d"))), csr("example.com/a", cert([]byte("c"))), denied + `"example.com/a"`},
		{"empty certificate differs from none", allow("sign"), "status", csr("example.com/a", cert([]byte{})), csr("example.com/a"), denied + `"example.com/a"`},
		{"condition added, denied", allow("sign"), "status", csr("example.com/a", condition(certificatesv1.CertificateFailed)), csr("example.com/a"), denied + `"example.com/a"`},
		{"the old signer name is checked", allow("sign", "example.com/new"), "status", csr("example.com/new", cert([]byte("c"))), csr("example.com/old"), denied + `"example.com/old"`},
		{"nothing signed changes", allow("sign"), "status", csr("example.com/a", cert([]byte("c")), condition(certificatesv1.CertificateApproved)),
			csr("example.com/a", cert([]byte("c")), condition(certificatesv1.CertificateApproved)), ""},
		{"approval subresource is not checked", allow("sign"), "approval", csr("example.com/a", cert([]byte("c"))), csr("example.com/a"), ""},
		{"main resource is not checked", allow("sign"), "", csr("example.com/a", cert([]byte("c"))), csr("example.com/a"), ""},
		{"wrong old type", allow("sign"), "status", csr("example.com/a"), &corev1.Pod{},
			`certificatesigningrequests.certificates.k8s.io "req" is forbidden: expected type CertificateSigningRequest, got: *core.Pod`},
		{"wrong new type", allow("sign"), "status", &corev1.Pod{}, csr("example.com/a"),
			`certificatesigningrequests.certificates.k8s.io "req" is forbidden: expected type CertificateSigningRequest, got: *core.Pod`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Name: "req", Resource: csrResource, Subresource: tc.subresource, Operation: admission.Update,
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
	want := `couldn't init admission plugin "CertificateSigning": CertificateSigning requires an authorizer`
	if _, err := r.NewChain([]string{Name}, admission.PluginContext{}, nil); err == nil || err.Error() != want {
		t.Errorf("NewChain without authorizer = %v, want %q", err, want)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
