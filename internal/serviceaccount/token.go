// Package serviceaccount issues service-account tokens: the signed JWTs of
// the TokenRequest API (serviceaccounts/token), with upstream's claims
// (pkg/serviceaccount/claims.go) and key id, signed RS256, ES256, ES384 or
// ES512 as the key demands, with a key that lives in the data directory
// (ES256 when admitd generates it).
//
// It also signs the long-lived tokens of kubernetes.io/service-account-token
// Secrets (IssueLegacy). An Authenticator checks bound tokens and a
// LegacyAuthenticator Secret-based ones, against a set of verification keys
// (Keys, --service-account-key-file) and issuers, reading the objects a
// token names through a Getter; request authentication and TokenReview use
// them. OpenIDMetadata is the issuer's discovery document and key set.
//
// The package knows nothing of HTTP or storage: the API server builds the
// claims from the objects it read and asks an Issuer to sign them.
package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// DefaultIssuer is the "iss" of tokens and the default audience, as a
// kube-apiserver started with --service-account-issuer
// https://kubernetes.default.svc.cluster.local (kind, kubeadm).
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// Expiration constants of upstream's pkg/serviceaccount.
const (
	// WarnOnlyBoundTokenExpirationSeconds is the expiration kubelet asks
	// for on projected tokens; with an extended expiration the token is
	// valid for ExtendedExpirationSeconds and carries a warnafter claim.
	WarnOnlyBoundTokenExpirationSeconds = 60*60 + 7
	// ExtendedExpirationSeconds is one year.
	ExtendedExpirationSeconds = 365 * 24 * 60 * 60
)

// Issuer signs tokens with one key.
type Issuer struct {
	key   crypto.Signer
	alg   string
	keyID string
	// Issuer is the "iss" claim.
	Issuer string
	// Audiences are the API server's own audiences (--api-audiences):
	// the default of a TokenRequest without audiences.
	Audiences []string
	// MaxExpirationSeconds caps the expiration TokenRequests ask for
	// (--service-account-max-token-expiration); 0 leaves it uncapped.
	MaxExpirationSeconds int64
	// NoExtendedExpiration is --service-account-extend-token-expiration=
	// false: kubelet's pod-bound 3607-second tokens are not extended to a
	// year. Default false (extended, as upstream).
	NoExtendedExpiration bool
}

// NewIssuer returns an issuer signing with key under the given issuer
// name, with the algorithm upstream picks for the key: RS256 for RSA,
// ES256, ES384 or ES512 for ECDSA P-256, P-384 or P-521. Its audiences
// default to [issuer].
func NewIssuer(key crypto.Signer, issuer string) (*Issuer, error) {
	alg, err := algorithmFor(key)
	if err != nil {
		return nil, err
	}
	kid, err := keyID(key.Public())
	if err != nil {
		return nil, err
	}
	return &Issuer{key: key, alg: alg, keyID: kid, Issuer: issuer, Audiences: []string{issuer}}, nil
}

func algorithmFor(key crypto.Signer) (string, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return "RS256", nil
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
		return "", fmt.Errorf("unsupported ECDSA curve %s of the service-account signing key, must be P-256, P-384 or P-521",
			k.Curve.Params().Name)
	}
	return "", fmt.Errorf("unsupported service-account signing key %T", key)
}

// keyID is upstream's keyIDFromPublicKey: the unpadded base64url SHA-256 of
// the PKIX DER of the public key.
func keyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("encoding the public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// PublicKey returns the key that verifies the issuer's tokens.
func (i *Issuer) PublicKey() crypto.PublicKey { return i.key.Public() }

// Ref names a Kubernetes object in the private claims.
type Ref struct {
	Name string    `json:"name,omitempty"`
	UID  types.UID `json:"uid,omitempty"`
}

// Bound lists the objects a token is bound to; any may be nil.
type Bound struct {
	Pod    *corev1.Pod
	Secret *corev1.Secret
	Node   *corev1.Node
}

// Claims are the registered and private claims of one token.
type Claims struct {
	Subject   string
	Audiences []string
	IssuedAt  time.Time
	Expiry    time.Time
	ID        string
	// Kubernetes is the "kubernetes.io" private claim.
	Kubernetes KubernetesClaim
}

// KubernetesClaim is the "kubernetes.io" private claim.
type KubernetesClaim struct {
	Namespace      string `json:"namespace,omitempty"`
	ServiceAccount Ref    `json:"serviceaccount,omitempty"`
	Pod            *Ref   `json:"pod,omitempty"`
	Secret         *Ref   `json:"secret,omitempty"`
	Node           *Ref   `json:"node,omitempty"`
	WarnAfter      *int64 `json:"warnafter,omitempty"`
}

// NewClaims is upstream's serviceaccount.Claims: the token of sa, bound to
// the given objects, issued at now and valid for expirationSeconds;
// warnAfter (seconds, 0 for none) adds the warnafter claim.
func NewClaims(sa *corev1.ServiceAccount, bound Bound, now time.Time, expirationSeconds, warnAfter int64, audiences []string) Claims {
	c := Claims{
		Subject:   "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		Audiences: audiences,
		IssuedAt:  now,
		Expiry:    now.Add(time.Duration(expirationSeconds) * time.Second),
		ID:        string(uuid.NewUUID()),
		Kubernetes: KubernetesClaim{
			Namespace:      sa.Namespace,
			ServiceAccount: Ref{Name: sa.Name, UID: sa.UID},
		},
	}
	if s := bound.Secret; s != nil {
		c.Kubernetes.Secret = &Ref{Name: s.Name, UID: s.UID}
	}
	if p := bound.Pod; p != nil {
		c.Kubernetes.Pod = &Ref{Name: p.Name, UID: p.UID}
	}
	if n := bound.Node; n != nil {
		c.Kubernetes.Node = &Ref{Name: n.Name, UID: n.UID}
	}
	if warnAfter != 0 {
		w := now.Add(time.Duration(warnAfter) * time.Second).Unix()
		c.Kubernetes.WarnAfter = &w
	}
	return c
}

// payload is the JSON claim set, keys in the order encoding/json sorts a
// map: aud, exp, iat, iss, jti, kubernetes.io, nbf, sub.
func (i *Issuer) payload(c Claims) map[string]any {
	return map[string]any{
		"iss":           i.Issuer,
		"sub":           c.Subject,
		"aud":           c.Audiences,
		"exp":           c.Expiry.Unix(),
		"iat":           c.IssuedAt.Unix(),
		"nbf":           c.IssuedAt.Unix(),
		"jti":           c.ID,
		"kubernetes.io": c.Kubernetes,
	}
}

// Issue returns the signed compact JWS of c.
func (i *Issuer) Issue(c Claims) (string, error) {
	return i.signClaims(i.payload(c))
}

// signClaims returns the compact JWS of the claim set.
func (i *Issuer) signClaims(claims any) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": i.alg, "kid": i.keyID})
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(body)
	sig, err := i.sign([]byte(signing))
	if err != nil {
		return "", fmt.Errorf("signing the token: %w", err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

func (i *Issuer) sign(data []byte) ([]byte, error) {
	switch k := i.key.(type) {
	case *rsa.PrivateKey:
		digest := sha256.Sum256(data)
		return rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
	case *ecdsa.PrivateKey:
		size := (k.Curve.Params().BitSize + 7) / 8
		r, s, err := ecdsa.Sign(rand.Reader, k, ecdsaDigest(size, data))
		if err != nil {
			return nil, err
		}
		// A JWS ECDSA signature is r and s as two big-endian numbers of
		// the curve's coordinate size (32, 48 or 66 bytes; RFC 7518 3.4).
		out := make([]byte, 2*size)
		r.FillBytes(out[:size])
		s.FillBytes(out[size:])
		return out, nil
	}
	return nil, errors.New("unsupported key")
}

// Verify checks the signature of a token issued by i and returns its
// claim set. It does not check expiry or audiences.
func (i *Issuer) Verify(token string) (map[string]any, error) {
	parts, err := splitJWS(token)
	if err != nil {
		return nil, err
	}
	keys, err := NewKeys(i.key)
	if err != nil {
		return nil, err
	}
	if err := (jwtCheck{keys: keys}).verify(parts, i.alg, ""); err != nil {
		return nil, err
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("decoding the claims: %w", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(body, &claims); err != nil {
		return nil, fmt.Errorf("decoding the claims: %w", err)
	}
	return claims, nil
}

func splitJWS(token string) ([3]string, error) {
	var parts [3]string
	n := 0
	start := 0
	for i := 0; i < len(token); i++ {
		if token[i] == '.' {
			if n == 2 {
				return parts, errors.New("malformed token")
			}
			parts[n] = token[start:i]
			n++
			start = i + 1
		}
	}
	if n != 2 {
		return parts, errors.New("malformed token")
	}
	parts[2] = token[start:]
	return parts, nil
}
