package serviceaccount

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
)

// LegacyIssuer is the "iss" of Secret-based tokens.
const LegacyIssuer = "kubernetes/serviceaccount"

// Labels of legacy token Secrets, as upstream's: LegacyTokenInvalidSinceLabel
// marks a Secret whose token must no longer be accepted (upstream's legacy
// token cleaner sets it), LegacyTokenLastUsedLabel is the day (UTC) its
// token was last used.
const (
	LegacyTokenInvalidSinceLabel = "kubernetes.io/legacy-token-invalid-since"
	LegacyTokenLastUsedLabel     = "kubernetes.io/legacy-token-last-used"
)

// LegacyTracker records the use of legacy tokens, as upstream does: audit
// annotations, a warning, and the last-used label of the Secret. The
// server implements it; nil records nothing.
type LegacyTracker interface {
	Annotate(ctx context.Context, key, value string)
	Warn(ctx context.Context, text string)
	// Used is called with the Secret of a token that was used (even
	// one marked invalid), to label it with the day.
	Used(ctx context.Context, secret *corev1.Secret)
}

// legacyClaims are the private claims of a Secret-based token.
type legacyClaims struct {
	ServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name"`
	ServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid"`
	SecretName         string `json:"kubernetes.io/serviceaccount/secret.name"`
	Namespace          string `json:"kubernetes.io/serviceaccount/namespace"`
}

// IssueLegacy signs the long-lived token of a kubernetes.io/
// service-account-token Secret of sa: no expiry, no audiences, issuer
// LegacyIssuer.
func (i *Issuer) IssueLegacy(sa *corev1.ServiceAccount, secret *corev1.Secret) (string, error) {
	return i.signClaims(map[string]any{
		"iss":                                    LegacyIssuer,
		"sub":                                    "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		"kubernetes.io/serviceaccount/namespace": sa.Namespace,
		"kubernetes.io/serviceaccount/secret.name":          secret.Name,
		"kubernetes.io/serviceaccount/service-account.name": sa.Name,
		"kubernetes.io/serviceaccount/service-account.uid":  string(sa.UID),
	})
}

// LegacyAuthenticator checks Secret-based service-account tokens as
// kube-apiserver does: signature, audiences, the legacy claims and, with
// Lookup (--service-account-lookup), that the Secret still exists and
// holds this very token and that the service account still exists with
// the uid the token names.
type LegacyAuthenticator struct {
	// Keys verify the signatures (--service-account-key-file).
	Keys Keys
	// Audiences are the API server's own (--api-audiences).
	Audiences []string
	Lookup    bool
	Objects   Getter
	// Tracker, optional, records the use of tokens found by lookup.
	Tracker LegacyTracker
}

// AuthenticateToken implements auth.AudienceTokenAuthenticator.
func (a *LegacyAuthenticator) AuthenticateToken(ctx context.Context, token string, auds []string) (authenticationv1.UserInfo, []string, bool, error) {
	var reg registered
	var c legacyClaims
	check := jwtCheck{issuers: []string{LegacyIssuer}, keys: a.Keys, audiences: a.Audiences}
	valid, ok, err := check.check(token, auds, &reg, &c)
	if !ok || err != nil {
		return authenticationv1.UserInfo{}, nil, false, err
	}
	if err := checkLegacyClaims(reg.Subject, c); err != nil {
		return authenticationv1.UserInfo{}, nil, false, err
	}
	if a.Tracker != nil && len(reg.Audiences) == 0 {
		a.Tracker.Annotate(ctx, "authentication.k8s.io/legacy-token", reg.Subject)
	}
	if a.Lookup {
		if err := a.lookup(ctx, token, c); err != nil {
			return authenticationv1.UserInfo{}, nil, false, err
		}
	}
	user := authenticationv1.UserInfo{Username: reg.Subject, UID: c.ServiceAccountUID,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + c.Namespace}}
	return user, valid, true, nil
}

// checkLegacyClaims requires every legacy claim, and a subject that names
// the same service account.
func checkLegacyClaims(subject string, c legacyClaims) error {
	for _, claim := range []struct{ value, name string }{
		{subject, "sub"}, {c.Namespace, "namespace"}, {c.SecretName, "secretName"},
		{c.ServiceAccountName, "serviceAccountName"}, {c.ServiceAccountUID, "serviceAccountUID"},
	} {
		if claim.value == "" {
			return fmt.Errorf("%s claim is missing", claim.name)
		}
	}
	rest, ok := strings.CutPrefix(subject, "system:serviceaccount:")
	ns, name, _ := strings.Cut(rest, ":")
	if !ok || ns != c.Namespace || name != c.ServiceAccountName {
		return errors.New("sub claim is invalid")
	}
	return nil
}

// lookup checks the Secret and the service account the token names. The
// token is compared in constant time and never reported.
func (a *LegacyAuthenticator) lookup(ctx context.Context, token string, c legacyClaims) error {
	ns := c.Namespace
	secret, err := a.Objects.Secret(ctx, ns, c.SecretName)
	if err != nil || secret.DeletionTimestamp != nil {
		return errors.New("Token has been invalidated") // upstream's words
	}
	if subtle.ConstantTimeCompare(secret.Data[corev1.ServiceAccountTokenKey], []byte(token)) == 0 {
		return errors.New("Token does not match server's copy") // upstream's words
	}
	sa, err := a.Objects.ServiceAccount(ctx, ns, c.ServiceAccountName)
	if err != nil {
		return err
	}
	if sa.DeletionTimestamp != nil {
		return fmt.Errorf("ServiceAccount %s/%s has been deleted", ns, c.ServiceAccountName)
	}
	if string(sa.UID) != c.ServiceAccountUID {
		return fmt.Errorf("ServiceAccount UID (%s) does not match claim (%s)", sa.UID, c.ServiceAccountUID)
	}
	if secret.Labels[LegacyTokenInvalidSinceLabel] != "" {
		a.track(ctx, sa, secret, true)
		return fmt.Errorf("the token in secret %s/%s for service account %s/%s has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '%s' label from the secret to temporarily allow use of this token",
			ns, c.SecretName, ns, c.ServiceAccountName, LegacyTokenInvalidSinceLabel)
	}
	a.track(ctx, sa, secret, false)
	return nil
}

// track records the use of the token of secret: invalidated, or
// auto-generated (listed in the account's secrets) or made by hand.
func (a *LegacyAuthenticator) track(ctx context.Context, sa *corev1.ServiceAccount, secret *corev1.Secret, invalidated bool) {
	t := a.Tracker
	if t == nil {
		return
	}
	switch {
	case invalidated:
		t.Annotate(ctx, "authentication.k8s.io/legacy-token-invalidated", secret.Name+"/"+secret.Namespace)
	case slices.ContainsFunc(sa.Secrets, func(r corev1.ObjectReference) bool { return r.Name == secret.Name }):
		t.Warn(ctx, "Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens.")
		t.Annotate(ctx, "authentication.k8s.io/legacy-token-autogenerated-secret", secret.Name)
	default:
		t.Annotate(ctx, "authentication.k8s.io/legacy-token-manual-secret", secret.Name)
	}
	t.Used(ctx, secret)
}
