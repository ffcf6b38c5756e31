package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"math/big"
	"os"
)

// PublicKey is a key that verifies tokens, with its key id (the "kid" of
// the tokens it verifies and of its JWK).
type PublicKey struct {
	KeyID string
	Key   crypto.PublicKey
}

// Keys are the keys that verify tokens, as kube-apiserver's
// --service-account-key-file: every key is tried for a token without a
// matching kid.
type Keys []PublicKey

// NewKeys returns the verification keys of keys, which may be public or
// private (RSA or ECDSA) keys.
func NewKeys(keys ...any) (Keys, error) {
	out := make(Keys, 0, len(keys))
	for _, k := range keys {
		if priv, ok := k.(interface{ Public() crypto.PublicKey }); ok {
			k = priv.Public()
		}
		switch k.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey:
		default:
			return nil, fmt.Errorf("unsupported service-account key %T", k)
		}
		kid, err := keyID(k)
		if err != nil {
			return nil, err
		}
		out = append(out, PublicKey{KeyID: kid, Key: k})
	}
	return out, nil
}

// ReadKeyFiles reads the PEM files of --service-account-key-file: each
// holds one or more public keys (PKIX or PKCS#1), private keys (PKCS#8,
// PKCS#1 or SEC 1) or certificates; other blocks are skipped.
func ReadKeyFiles(paths ...string) (Keys, error) {
	var all []any
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		keys := parseKeysPEM(data)
		if len(keys) == 0 {
			return nil, fmt.Errorf("error reading public key file %s: data does not contain any valid RSA or ECDSA public keys", p)
		}
		all = append(all, keys...)
	}
	return NewKeys(all...)
}

// parseKeysPEM returns the keys of the PEM blocks of data that hold one.
func parseKeysPEM(data []byte) []any {
	var keys []any
	for {
		var block *pem.Block
		if block, data = pem.Decode(data); block == nil {
			return keys
		}
		if key := parseKeyDER(block.Bytes); key != nil {
			keys = append(keys, key)
		}
	}
}

func parseKeyDER(der []byte) any {
	if k, err := x509.ParsePKIXPublicKey(der); err == nil {
		return k
	}
	if k, err := x509.ParsePKCS1PublicKey(der); err == nil {
		return k
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		return k
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k
	}
	if c, err := x509.ParseCertificate(der); err == nil {
		return c.PublicKey
	}
	return nil
}

// forID returns the keys with the given kid, or all keys when kid is empty.
func (k Keys) forID(kid string) Keys {
	if kid == "" {
		return k
	}
	var out Keys
	for _, key := range k {
		if key.KeyID == kid {
			out = append(out, key)
		}
	}
	return out
}

// algorithm is the JWS algorithm of a verification key.
func algorithm(pub crypto.PublicKey) (string, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return "RS256", nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
	}
	return "", fmt.Errorf("unsupported service-account key %T", pub)
}

// verifySignature checks the JWS signature sig of signed made by pub with
// the algorithm alg of the token's header.
func verifySignature(pub crypto.PublicKey, alg string, signed, sig []byte) error {
	want, err := algorithm(pub)
	if err != nil {
		return err
	}
	if alg != want {
		return fmt.Errorf("unexpected signature algorithm %q", alg)
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		d := sha256.Sum256(signed)
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, d[:], sig)
	case *ecdsa.PublicKey:
		return verifyECDSA(k, signed, sig)
	}
	return errors.New("unsupported key")
}

func verifyECDSA(k *ecdsa.PublicKey, signed, sig []byte) error {
	size := (k.Curve.Params().BitSize + 7) / 8
	if len(sig) != 2*size {
		return errors.New("invalid ECDSA signature length")
	}
	r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
	if !ecdsa.Verify(k, ecdsaDigest(size, signed), r, s) {
		return errors.New("invalid signature")
	}
	return nil
}

// ecdsaDigest is the digest an ES256, ES384 or ES512 signature signs: the
// SHA-2 hash matching the curve, whose coordinates are size bytes long.
func ecdsaDigest(size int, data []byte) []byte {
	var h hash.Hash
	switch size {
	case 32:
		h = sha256.New()
	case 48:
		h = sha512.New384()
	default:
		h = sha512.New()
	}
	h.Write(data)
	return h.Sum(nil)
}
