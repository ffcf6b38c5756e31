package apiserver

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/registry"
)

// checkSigner runs the signer authorization a validated update through a
// subresource still needs (registry.SignerCheck), as upstream's
// PodCertificateRequest status strategy does in its validation: the user
// needs the verb on the signer's name or on its domain wildcard
// ("example.com/*"); an authorizer error counts as a refusal. Without an
// authorizer every check passes.
func (s *Server) checkSigner(ctx context.Context, rq *request, res *registry.Resource, obj, old runtime.Object) field.ErrorList {
	c := res.SignerCheckFor(rq.info.Subresource, obj, old)
	if c == nil || s.cfg.Authorizer == nil {
		return nil
	}
	domain, _, _ := strings.Cut(c.Signer, "/")
	for _, name := range []string{c.Signer, domain + "/*"} {
		d, _, err := s.cfg.Authorizer.Authorize(ctx, auth.Attributes{User: rq.user, Verb: c.Verb, ResourceRequest: true,
			APIGroup: "certificates.k8s.io", APIVersion: "*", Resource: "signers", Name: name})
		if err == nil && d == auth.DecisionAllow {
			return nil
		}
	}
	return c.Refused(rq.user.Username)
}
