// Package signerauthz answers the question the certificate admission plugins
// (CertificateApproval, CertificateSigning, ClusterTrustBundleAttest) share:
// may a user perform a verb on a signer name? It asks the authorizer about
// the synthetic, cluster-scoped resource certificates.k8s.io "signers",
// first by the signer's own name, then by its domain wildcard
// ("example.com/*"), as upstream's certauthorization package does.
//
// It is not an authorizer itself and keeps no state.
package signerauthz

import (
	"context"
	"log/slog"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/admitd/admitd/pkg/admission"
)

// Attributes is the authorization check of verb on the signer name.
func Attributes(user authenticationv1.UserInfo, verb, name string) admission.AuthorizationAttributes {
	return admission.AuthorizationAttributes{
		User:            user,
		Verb:            verb,
		Name:            name,
		APIGroup:        "certificates.k8s.io",
		APIVersion:      "*",
		Resource:        "signers",
		ResourceRequest: true,
	}
}

// Wildcard is the name that grants verb on every signer of signerName's
// domain: the part before the first "/", then "/*".
func Wildcard(signerName string) string {
	domain, _, _ := strings.Cut(signerName, "/")
	return domain + "/*"
}

// Authorized reports whether authz allows user verb on signerName, either by
// name or by its domain wildcard. An authorizer error counts as not allowed.
func Authorized(ctx context.Context, authz admission.Authorizer, user authenticationv1.UserInfo, verb, signerName string) bool {
	for _, name := range []string{signerName, Wildcard(signerName)} {
		d, reason, err := authz.Authorize(ctx, Attributes(user, verb, name))
		if err != nil {
			slog.Debug("signer authorization failed", "verb", verb, "signer", name, "reason", reason, "err", err)
			continue
		}
		if d == admission.AuthorizationAllow {
			return true
		}
	}
	return false
}
