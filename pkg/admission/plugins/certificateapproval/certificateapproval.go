// Package certificateapproval is the CertificateApproval admission plugin: an
// update of a CertificateSigningRequest's approval subresource is admitted
// only when the user may "approve" the request's signer name (resource
// certificates.k8s.io signers, by name or by the signer domain's wildcard),
// as upstream 1.37 with the same messages.
//
// It checks the signer name of the stored (old) object, so a request that
// also tries to change the signer name is judged by the name it had. It does
// not decide who may update the approval subresource at all: that is the
// request's own authorization.
package certificateapproval

import (
	"context"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/signerauthz"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/typename"
)

// Name is the upstream plugin name.
const Name = "CertificateApproval"

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Authorizer == nil {
			return nil, errors.New(Name + " requires an authorizer")
		}
		return New(pc.Authorizer), nil
	})
}

// Plugin is the CertificateApproval plugin.
type Plugin struct {
	authz admission.Authorizer
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin asking authz.
func New(authz admission.Authorizer) *Plugin { return &Plugin{authz: authz} }

// Handles UPDATE only.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Update }

var csrs = schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}

// Concerns reports whether the request is on the approval subresource of a
// certificate signing request.
func (p *Plugin) Concerns(a *admission.Attributes) bool {
	return a.Subresource == "approval" && a.Resource.GroupResource() == csrs
}

// Validate refuses an approval the user may not give for the signer name.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	csr, ok := a.OldObject.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %s", typename.Of(a.OldObject)))
	}
	if !signerauthz.Authorized(ctx, p.authz, a.UserInfo, "approve", csr.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to approve requests with signerName %q", csr.Spec.SignerName))
	}
	return nil
}
