// Package certificatesigning is the CertificateSigning admission plugin: an
// update of a CertificateSigningRequest's status subresource that changes
// status.certificate or status.conditions is admitted only when the user
// may "sign" for the request's signer name (resource certificates.k8s.io
// signers, by name or by the signer domain's wildcard), as upstream 1.37
// with the same messages.
//
// The signer name checked is the stored (old) object's. Status updates that
// change neither field pass untouched. It does not check the certificate
// itself.
package certificatesigning

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/signerauthz"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/typename"
)

// Name is the upstream plugin name.
const Name = "CertificateSigning"

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Authorizer == nil {
			return nil, errors.New(Name + " requires an authorizer")
		}
		return New(pc.Authorizer), nil
	})
}

// Plugin is the CertificateSigning plugin.
type Plugin struct {
	authz admission.Authorizer
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin asking authz.
func New(authz admission.Authorizer) *Plugin { return &Plugin{authz: authz} }

// Handles UPDATE only.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Update }

var csrs = schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}

// Concerns reports whether the request is on the status subresource of a
// certificate signing request.
func (p *Plugin) Concerns(a *admission.Attributes) bool {
	return a.Subresource == "status" && a.Resource.GroupResource() == csrs
}

// Validate refuses a certificate or condition change the user may not make
// for the signer name.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	old, ok := a.OldObject.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %s", typename.Of(a.OldObject)))
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %s", typename.Of(a.Object)))
	}
	if sameCertificate(old.Status.Certificate, csr.Status.Certificate) &&
		equality.Semantic.DeepEqual(old.Status.Conditions, csr.Status.Conditions) {
		return nil
	}
	if !signerauthz.Authorized(ctx, p.authz, a.UserInfo, "sign", old.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to sign requests with signerName %q", old.Spec.SignerName))
	}
	return nil
}

// sameCertificate compares as reflect.DeepEqual does: a nil and an empty
// certificate differ.
func sameCertificate(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}
