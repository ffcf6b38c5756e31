package serviceaccount

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
)

// Paths of the issuer discovery documents, as upstream's.
const (
	OpenIDConfigPath = "/.well-known/openid-configuration"
	JWKSPath         = "/openid/v1/jwks"
)

// OpenIDMetadata is the OIDC discovery document and key set of an issuer,
// which relying parties use to verify its tokens without the API.
type OpenIDMetadata struct {
	// Config is the JSON of /.well-known/openid-configuration.
	Config []byte
	// KeySet is the JSON Web Key Set of /openid/v1/jwks.
	KeySet []byte
}

// NewOpenIDMetadata returns the documents of issuer (an https URL without
// query or fragment, or discovery is off) with keys. jwksURI defaults to
// https://<externalAddress>/openid/v1/jwks.
func NewOpenIDMetadata(issuer, jwksURI, externalAddress string, keys Keys) (*OpenIDMetadata, error) {
	iss, err := url.Parse(issuer)
	if err != nil {
		return nil, err
	}
	if iss.Scheme != "https" || iss.RawQuery != "" || iss.Fragment != "" {
		return nil, fmt.Errorf("issuer URL must be https, without query or fragment, got: %s", issuer)
	}
	if jwksURI == "" {
		if externalAddress == "" {
			return nil, errors.New("either the JWKS URI or the default external address, or both, must be set")
		}
		jwksURI = (&url.URL{Scheme: "https", Host: externalAddress, Path: JWKSPath}).String()
	}
	if len(keys) == 0 {
		return nil, errors.New("no keys provided for validating keyset")
	}
	set, algs, err := jwks(keys)
	if err != nil {
		return nil, err
	}
	config, err := json.Marshal(openIDConfig{Issuer: issuer, JWKSURI: jwksURI, ResponseTypes: []string{"id_token"},
		SubjectTypes: []string{"public"}, SigningAlgs: algs})
	if err != nil {
		return nil, err
	}
	keySet, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	return &OpenIDMetadata{Config: config, KeySet: keySet}, nil
}

// openIDConfig is the discovery document, fields in upstream's order.
type openIDConfig struct {
	Issuer        string   `json:"issuer"`
	JWKSURI       string   `json:"jwks_uri"`
	ResponseTypes []string `json:"response_types_supported"`
	SubjectTypes  []string `json:"subject_types_supported"`
	SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
}

// jwk is a public JSON Web Key (RFC 7517), fields in the order go-jose,
// and so kube-apiserver, writes them.
type jwk struct {
	Use string `json:"use"`
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Crv string `json:"crv,omitempty"`
	Alg string `json:"alg"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
}

// jwks returns the key set of keys and its sorted, distinct algorithms.
func jwks(keys Keys) (struct {
	Keys []jwk `json:"keys"`
}, []string, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	var algs []string
	for i, k := range keys {
		j, err := toJWK(k)
		if err != nil {
			return set, nil, fmt.Errorf("error constructing JWK for key #%d: %w", i, err)
		}
		set.Keys = append(set.Keys, j)
		if !slices.Contains(algs, j.Alg) {
			algs = append(algs, j.Alg)
		}
	}
	slices.Sort(algs)
	return set, algs, nil
}

func toJWK(k PublicKey) (jwk, error) {
	alg, err := algorithm(k.Key)
	if err != nil {
		return jwk{}, err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	out := jwk{Use: "sig", Kid: k.KeyID, Alg: alg}
	switch pub := k.Key.(type) {
	case *rsa.PublicKey:
		out.Kty, out.N, out.E = "RSA", b64(pub.N.Bytes()), b64(big.NewInt(int64(pub.E)).Bytes())
	case *ecdsa.PublicKey:
		size := (pub.Curve.Params().BitSize + 7) / 8
		x, y := make([]byte, size), make([]byte, size)
		pub.X.FillBytes(x)
		pub.Y.FillBytes(y)
		out.Kty, out.Crv, out.X, out.Y = "EC", pub.Curve.Params().Name, b64(x), b64(y)
	}
	return out, nil
}
