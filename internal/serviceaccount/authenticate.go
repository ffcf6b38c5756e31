package serviceaccount

import (
	"context"
	"errors"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Extra keys of a service account user, as upstream's.
const (
	PodNameKey      = "authentication.kubernetes.io/pod-name"
	PodUIDKey       = "authentication.kubernetes.io/pod-uid"
	NodeNameKey     = "authentication.kubernetes.io/node-name"
	NodeUIDKey      = "authentication.kubernetes.io/node-uid"
	credentialIDKey = "authentication.kubernetes.io/credential-id"
)

// leeway is the clock skew tolerated on the time claims and on deletions
// of bound objects.
const leeway = time.Minute

// errInvalidated is the error of a token whose bound object is gone.
var errInvalidated = errors.New("service account token has been invalidated")

// Getter reads the objects a token names. A missing object is an error,
// preferably the API's NotFound (its message reaches the reviewer).
type Getter interface {
	ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	Node(ctx context.Context, name string) (*corev1.Node, error)
}

// Authenticator checks bound service-account tokens (TokenRequest tokens),
// as kube-apiserver does: issuer, signature, audiences, time claims, then
// the service account and the objects the token is bound to, which must
// still exist with the uid it names (whatever --service-account-lookup
// says, as upstream). It implements auth.AudienceTokenAuthenticator.
// Legacy Secret-based tokens are LegacyAuthenticator's.
type Authenticator struct {
	// Issuers are the accepted "iss" claims (--service-account-issuer).
	Issuers []string
	// Keys verify the signatures (--service-account-key-file).
	Keys Keys
	// Audiences are the API server's own (--api-audiences): those of a
	// token without "aud", and those checked when none are asked for.
	Audiences []string
	Objects   Getter
	// Now defaults to time.Now.
	Now func() time.Time
}

// Authenticator returns the Authenticator of the tokens i signs alone.
func (i *Issuer) Authenticator(objects Getter) *Authenticator {
	keys, err := NewKeys(i.key)
	if err != nil {
		panic(err) // NewIssuer accepted the key
	}
	return &Authenticator{Issuers: []string{i.Issuer}, Keys: keys, Audiences: i.Audiences, Objects: objects}
}

// verifiedClaims are the claims Authenticator reads.
type verifiedClaims struct {
	registered
	Kubernetes KubernetesClaim `json:"kubernetes.io"`
}

// AuthenticateToken reports ok=false without an error for a token that is
// not a JWT of a's issuers, so that other authenticators may try it.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string, auds []string) (authenticationv1.UserInfo, []string, bool, error) {
	c := &verifiedClaims{}
	check := jwtCheck{issuers: a.Issuers, keys: a.Keys, audiences: a.Audiences}
	valid, ok, err := check.check(token, auds, &c.registered, c)
	if !ok || err != nil {
		return authenticationv1.UserInfo{}, nil, false, err
	}
	user, err := a.validate(ctx, c)
	if err != nil {
		return authenticationv1.UserInfo{}, nil, false, err
	}
	return user, valid, true, nil
}

func (a *Authenticator) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// checkTimes applies the time claims with leeway.
func checkTimes(c *verifiedClaims, now time.Time) error {
	at := func(f *float64) time.Time { return time.Unix(int64(*f), 0) }
	switch {
	case c.NotBefore != nil && now.Add(leeway).Before(at(c.NotBefore)):
		return errors.New("service account token is not valid yet")
	case c.Expiry != nil && now.Add(-leeway).After(at(c.Expiry)):
		return errors.New("service account token has expired")
	case c.IssuedAt != nil && now.Add(leeway).Before(at(c.IssuedAt)):
		return errors.New("service account token is issued in the future")
	}
	return nil
}

// gone reports whether an object was deleted (is waiting for its
// finalizers) for longer than the leeway.
func gone(deleted *metav1.Time, now time.Time) bool {
	return deleted != nil && deleted.Time.Before(now.Add(-leeway))
}
