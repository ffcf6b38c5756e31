package serviceaccount

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// Authenticator checks the tokens an Issuer signed (TokenRequest tokens),
// as kube-apiserver checks bound service-account tokens: signature, time
// claims, audiences, then the service account and the objects the token is
// bound to, which must still exist with the uid it names. It implements
// auth.AudienceTokenAuthenticator. Legacy Secret-based tokens are not
// recognised.
type Authenticator struct {
	Issuer  *Issuer
	Objects Getter
	// Now defaults to time.Now.
	Now func() time.Time
}

// verifiedClaims are the claims Authenticator reads.
type verifiedClaims struct {
	Issuer     string          `json:"iss"`
	Audiences  audiences       `json:"aud"`
	Expiry     *float64        `json:"exp"`
	NotBefore  *float64        `json:"nbf"`
	IssuedAt   *float64        `json:"iat"`
	ID         string          `json:"jti"`
	Kubernetes KubernetesClaim `json:"kubernetes.io"`
}

// audiences reads "aud" as a string or a list of them.
type audiences []string

func (a *audiences) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*a = audiences{one}
		return nil
	}
	var many []string
	err := json.Unmarshal(data, &many)
	*a = many
	return err
}

// AuthenticateToken reports ok=false without an error for a token that is
// not a JWT of a's issuer, so that other authenticators may try it.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string, auds []string) (authenticationv1.UserInfo, []string, bool, error) {
	if !a.ownIssuer(token) {
		return authenticationv1.UserInfo{}, nil, false, nil
	}
	c, err := a.verified(token)
	if err != nil {
		return authenticationv1.UserInfo{}, nil, false, err
	}
	valid, err := a.audiences(c, auds)
	if err != nil {
		return authenticationv1.UserInfo{}, nil, false, err
	}
	user, err := a.validate(ctx, c)
	if err != nil {
		return authenticationv1.UserInfo{}, nil, false, err
	}
	return user, valid, true, nil
}

// ownIssuer peeks, without verifying, at the issuer of a JWT.
func (a *Authenticator) ownIssuer(token string) bool {
	parts, err := splitJWS(token)
	if err != nil {
		return false
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var c struct {
		Issuer string `json:"iss"`
	}
	return json.Unmarshal(body, &c) == nil && c.Issuer == a.Issuer.Issuer
}

func (a *Authenticator) verified(token string) (*verifiedClaims, error) {
	m, err := a.Issuer.Verify(token)
	if err != nil {
		return nil, fmt.Errorf("invalid service account token signature: %w", err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	c := &verifiedClaims{}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("service account token claims could not be read: %w", err)
	}
	return c, nil
}

// audiences are those of the token's audiences asked for (by default the
// API server's own). A token without audiences is for the API server.
func (a *Authenticator) audiences(c *verifiedClaims, asked []string) ([]string, error) {
	implicit := a.Issuer.Audiences
	tokenAuds := []string(c.Audiences)
	if len(tokenAuds) == 0 {
		tokenAuds = implicit
	}
	if len(asked) == 0 {
		asked = implicit
	}
	var valid []string
	for _, aud := range tokenAuds {
		if slices.Contains(asked, aud) {
			valid = append(valid, aud)
		}
	}
	if len(valid) == 0 && len(implicit) != 0 {
		return nil, fmt.Errorf("token audiences %q is invalid for the target audiences %q", tokenAuds, asked)
	}
	return valid, nil
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
