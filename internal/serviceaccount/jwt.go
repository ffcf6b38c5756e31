package serviceaccount

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// jwtCheck is what bound and legacy tokens share: the issuers accepted,
// the keys that verify signatures and the API server's own audiences.
type jwtCheck struct {
	issuers   []string
	keys      Keys
	audiences []string
}

// registered are the registered claims of a token.
type registered struct {
	Issuer    string    `json:"iss"`
	Subject   string    `json:"sub"`
	Audiences audiences `json:"aud"`
	Expiry    *float64  `json:"exp"`
	NotBefore *float64  `json:"nbf"`
	IssuedAt  *float64  `json:"iat"`
	ID        string    `json:"jti"`
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

// check verifies token and decodes its claims into reg and private. ok is
// false without an error for a token that is not a compact JWS naming one
// of the issuers (peeked at before any verification), so that other
// authenticators may try it. auds are the token's audiences among those
// asked (by default the API server's).
func (j jwtCheck) check(token string, asked []string, reg *registered, private any) (auds []string, ok bool, err error) {
	parts, err := splitJWS(token)
	if err != nil || strings.HasPrefix(strings.TrimSpace(token), "{") {
		return nil, false, nil
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(body, reg) != nil || !slices.Contains(j.issuers, reg.Issuer) {
		return nil, false, nil
	}
	var header struct {
		Alg   string `json:"alg"`
		KeyID string `json:"kid"`
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(raw, &header) != nil {
		return nil, false, nil
	}
	if err := j.verify(parts, header.Alg, header.KeyID); err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(body, private); err != nil {
		return nil, false, fmt.Errorf("service account token claims could not be read: %w", err)
	}
	auds, err = j.audiencesOf(reg.Audiences, asked)
	return auds, err == nil, err
}

// verify checks the signature with the keys of kid (all keys without one).
func (j jwtCheck) verify(parts [3]string, alg, kid string) error {
	keys := j.keys.forID(kid)
	if len(keys) == 0 {
		return errors.New("invalid signature, no keys found")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return errors.New("invalid signature encoding")
	}
	signed := []byte(parts[0] + "." + parts[1])
	var errs []error
	for _, k := range keys {
		err := verifySignature(k.Key, alg, signed, sig)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("invalid service account token signature: %w", utilerrors.NewAggregate(errs))
}

// audiencesOf returns those of the token's audiences that were asked for
// (by default the API server's own); a token without audiences is for the
// API server.
func (j jwtCheck) audiencesOf(tokenAuds, asked []string) ([]string, error) {
	if len(tokenAuds) == 0 {
		tokenAuds = j.audiences
	}
	if len(asked) == 0 {
		asked = j.audiences
	}
	var valid []string
	for _, aud := range tokenAuds {
		if slices.Contains(asked, aud) {
			valid = append(valid, aud)
		}
	}
	if len(valid) == 0 && len(j.audiences) != 0 {
		return nil, fmt.Errorf("token audiences %q is invalid for the target audiences %q", tokenAuds, asked)
	}
	return valid, nil
}
