// Package certificatesubjectrestriction is the CertificateSubjectRestriction
// admission plugin: a new CertificateSigningRequest for the
// kubernetes.io/kube-apiserver-client signer may not ask for the
// system:masters organization (group), as upstream 1.37 with the same
// messages.
//
// It reads only the request's PEM-encoded subject; other signers, other
// fields and other operations pass untouched.
package certificatesubjectrestriction

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/typename"
)

// Name is the upstream plugin name.
const Name = "CertificateSubjectRestriction"

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(admission.PluginContext) (admission.Handler, error) {
		return &Plugin{}, nil
	})
}

// Plugin is the CertificateSubjectRestriction plugin.
type Plugin struct{}

var _ admission.Validator = (*Plugin)(nil)

// Handles CREATE only.
func (*Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

var csrs = schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}

// Concerns reports whether the request is on certificate signing requests
// (not a subresource).
func (*Plugin) Concerns(a *admission.Attributes) bool {
	return a.Resource.GroupResource() == csrs && a.Subresource == ""
}

// Validate refuses a kube-apiserver-client request for system:masters.
func (p *Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %s", typename.Of(a.Object)))
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil
	}
	req, err := parseCSR(csr.Spec.Request)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to parse CSR: %v", err))
	}
	for _, org := range req.Subject.Organization {
		if org == "system:masters" {
			return admission.NewForbidden(a, fmt.Errorf("use of %s signer with system:masters group is not allowed",
				certificatesv1.KubeAPIServerClientSignerName))
		}
	}
	return nil
}

// parseCSR decodes the first PEM block, which must be a CERTIFICATE REQUEST.
func parseCSR(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}
