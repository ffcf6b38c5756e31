package certificatesvalidation

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"
)

// The keys, requests and certificates the tests share, made once.

// stub is a PKCS#10 request for one key, with the key.
type stub struct {
	name string
	der  []byte
	key  crypto.Signer
}

// fixture holds every key material the tables and generators use.
type fixture struct {
	stubs                                                     []stub // ed25519, P224, P256, P384, P521, RSA 2048, RSA 3072
	goodCA1, goodCA2, notCA, headerBlock, badType, unparsable string
	ca                                                        crypto.Signer
	caCert                                                    *x509.Certificate
}

var fixtureOnce = sync.OnceValue(makeFixture)

func makeFixture() *fixture {
	f := &fixture{}
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	keys := []stub{{name: "ed25519", key: edKey}}
	for _, c := range []elliptic.Curve{elliptic.P224(), elliptic.P256(), elliptic.P384(), elliptic.P521()} {
		k, _ := ecdsa.GenerateKey(c, rand.Reader)
		keys = append(keys, stub{name: c.Params().Name, key: k})
	}
	for _, bits := range []int{2048, 3072} {
		k, _ := rsa.GenerateKey(rand.Reader, bits)
		keys = append(keys, stub{name: fmt.Sprintf("RSA %d", bits), key: k})
	}
	for _, k := range keys {
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, k.key)
		if err != nil {
			panic(err)
		}
		f.stubs = append(f.stubs, stub{name: k.name, der: der, key: k.key})
	}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	f.ca = caKey
	f.caCert = selfSigned(caKey, "root1", true)
	f.goodCA1 = pemOf("CERTIFICATE", nil, f.caCert.Raw)
	f.goodCA2 = pemOf("CERTIFICATE", nil, selfSigned(caKey, "root2", true).Raw)
	f.notCA = pemOf("CERTIFICATE", nil, selfSigned(caKey, "root3", false).Raw)
	f.headerBlock = pemOf("CERTIFICATE", map[string]string{"key": "value"}, f.caCert.Raw)
	f.badType = pemOf("NOTACERTIFICATE", nil, f.caCert.Raw)
	f.unparsable = pemOf("CERTIFICATE", nil, []byte("this is not a certificate"))
	return f
}

func selfSigned(key *ecdsa.PrivateKey, cn string, isCA bool) *x509.Certificate {
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(0), Subject: pkix.Name{CommonName: cn}, IsCA: isCA, BasicConstraintsValid: isCA}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c
}

func pemOf(typ string, headers map[string]string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Headers: headers, Bytes: der}))
}

// badSignature is der with its last byte changed (the signature's).
func badSignature(der []byte) []byte {
	out := append([]byte(nil), der...)
	out[len(out)-1] ^= 0xff
	return out
}

// leafOptions shape an issued certificate.
type leafOptions struct {
	notBefore, notAfter time.Time
	dnsNames, emails    []string
}

// issue is a certificate for pub signed by the fixture's CA.
func (f *fixture) issue(pub crypto.PublicKey, o leafOptions) string {
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "pod"}, NotBefore: o.notBefore,
		NotAfter: o.notAfter, DNSNames: o.dnsNames, EmailAddresses: o.emails}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, f.caCert, pub, f.ca)
	if err != nil {
		panic(err)
	}
	return pemOf("CERTIFICATE", nil, der)
}

// chainOf joins PEM blocks.
func chainOf(blocks ...string) string { return strings.Join(blocks, "") }
