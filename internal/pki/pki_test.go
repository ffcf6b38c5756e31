package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func newTestCA(t *testing.T) *CA {
	t.Helper()
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatalf("NewCA() error = %v", err)
	}
	return ca
}

func parseOne(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	certs, err := ParseCertsPEM(certPEM)
	if err != nil {
		t.Fatalf("ParseCertsPEM() error = %v", err)
	}
	return certs[0]
}

func TestNewCA(t *testing.T) {
	ca := newTestCA(t)
	c := ca.Cert
	if !c.IsCA || !c.BasicConstraintsValid {
		t.Errorf("NewCA() IsCA = %v, BasicConstraintsValid = %v, want true, true", c.IsCA, c.BasicConstraintsValid)
	}
	if !c.MaxPathLenZero || c.MaxPathLen != 0 {
		t.Errorf("NewCA() MaxPathLen = %d (zero set: %v), want 0: the CA signs leaves only", c.MaxPathLen, c.MaxPathLenZero)
	}
	if c.Subject.CommonName != "test-ca" {
		t.Errorf("NewCA() CN = %q, want %q", c.Subject.CommonName, "test-ca")
	}
	if c.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("NewCA() KeyUsage = %v, want CertSign set", c.KeyUsage)
	}
	if life := c.NotAfter.Sub(c.NotBefore); life < CAValidity || life > CAValidity+time.Hour {
		t.Errorf("NewCA() validity = %v, want about %v", life, CAValidity)
	}
	key, ok := c.PublicKey.(*ecdsa.PublicKey)
	if !ok || key.Curve != elliptic.P256() {
		t.Errorf("NewCA() public key = %T, want ECDSA P-256", c.PublicKey)
	}
	if err := c.CheckSignatureFrom(c); err != nil {
		t.Errorf("NewCA() is not self-signed: %v", err)
	}
}

func TestIssue(t *testing.T) {
	ca := newTestCA(t)
	servingCert, servingKey, err := ca.IssueServing([]string{"localhost", "127.0.0.1", "::1", "admitd.example"})
	if err != nil {
		t.Fatalf("IssueServing() error = %v", err)
	}
	clientCert, clientKey, err := ca.IssueClient("alice", []string{"dev", "ops"})
	if err != nil {
		t.Fatalf("IssueClient() error = %v", err)
	}
	tests := []struct {
		name      string
		certPEM   []byte
		keyPEM    []byte
		usage     x509.ExtKeyUsage
		wrong     x509.ExtKeyUsage
		dnsName   string
		wantCN    string
		wantOrgs  []string
		wantDNS   []string
		wantIPs   []string
		wantNoSAN bool
	}{
		{
			name: "serving", certPEM: servingCert, keyPEM: servingKey,
			usage: x509.ExtKeyUsageServerAuth, wrong: x509.ExtKeyUsageClientAuth, dnsName: "admitd.example",
			wantCN: "localhost", wantDNS: []string{"localhost", "admitd.example"}, wantIPs: []string{"127.0.0.1", "::1"},
		},
		{
			name: "client", certPEM: clientCert, keyPEM: clientKey,
			usage: x509.ExtKeyUsageClientAuth, wrong: x509.ExtKeyUsageServerAuth,
			wantCN: "alice", wantOrgs: []string{"dev", "ops"}, wantNoSAN: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cert := parseOne(t, tt.certPEM)
			opts := x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{tt.usage}, DNSName: tt.dnsName}
			if _, err := cert.Verify(opts); err != nil {
				t.Errorf("Verify(%v) error = %v, want nil", tt.usage, err)
			}
			opts = x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{tt.wrong}}
			if _, err := cert.Verify(opts); err == nil {
				t.Errorf("Verify(%v) error = nil, want an incompatible key usage error", tt.wrong)
			}
			if cert.IsCA {
				t.Errorf("IsCA = true, want false")
			}
			if cert.Subject.CommonName != tt.wantCN {
				t.Errorf("CN = %q, want %q", cert.Subject.CommonName, tt.wantCN)
			}
			if !slices.Equal(cert.Subject.Organization, tt.wantOrgs) {
				t.Errorf("O = %q, want %q", cert.Subject.Organization, tt.wantOrgs)
			}
			if !slices.Equal(cert.DNSNames, tt.wantDNS) {
				t.Errorf("DNSNames = %q, want %q", cert.DNSNames, tt.wantDNS)
			}
			var ips []string
			for _, ip := range cert.IPAddresses {
				ips = append(ips, ip.String())
			}
			if !slices.Equal(ips, tt.wantIPs) {
				t.Errorf("IPAddresses = %q, want %q", ips, tt.wantIPs)
			}
			if life := cert.NotAfter.Sub(cert.NotBefore); life < LeafValidity || life > LeafValidity+time.Hour {
				t.Errorf("validity = %v, want about %v", life, LeafValidity)
			}
			key, err := ParsePrivateKeyPEM(tt.keyPEM)
			if err != nil {
				t.Fatalf("ParsePrivateKeyPEM() error = %v", err)
			}
			if !publicKeysEqual(cert.PublicKey, key.Public()) {
				t.Errorf("key does not match certificate")
			}
		})
	}
}

func TestIssueErrors(t *testing.T) {
	ca := newTestCA(t)
	if _, _, err := ca.IssueServing(nil); err == nil {
		t.Errorf("IssueServing(nil) error = nil, want an error")
	}
	if _, _, err := ca.IssueClient("", nil); err == nil {
		t.Errorf(`IssueClient("", nil) error = nil, want an error`)
	}
}

func TestParsePrivateKeyPEM(t *testing.T) {
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalECPrivateKey(ecKey)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	pkcs8, _ := EncodePrivateKeyPEM(ecKey)
	ca := newTestCA(t)
	tests := []struct {
		name    string
		data    []byte
		wantErr bool
	}{
		{"pkcs8", pkcs8, false},
		{"sec1", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), false},
		{"pkcs1", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}), false},
		{"after a certificate", append(slices.Clone(ca.CertPEM), pkcs8...), false},
		{"certificate only", ca.CertPEM, true},
		{"empty", nil, true},
		{"garbage in block", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("nope")}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePrivateKeyPEM(tt.data)
			if (err != nil) != tt.wantErr {
				t.Errorf("ParsePrivateKeyPEM() error = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestParseCertsPEM(t *testing.T) {
	a, b := newTestCA(t), newTestCA(t)
	key, _ := a.KeyPEM()
	tests := []struct {
		name    string
		data    []byte
		want    int
		wantErr bool
	}{
		{"one", a.CertPEM, 1, false},
		{"two with a key between", slices.Concat(a.CertPEM, key, b.CertPEM), 2, false},
		{"key only", key, 0, true},
		{"not PEM", []byte("hello"), 0, true},
		{"bad DER", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2}}), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCertsPEM(tt.data)
			if (err != nil) != tt.wantErr || len(got) != tt.want {
				t.Errorf("ParseCertsPEM() = %d certs, %v, want %d certs, error %v", len(got), err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestLoadCA(t *testing.T) {
	dir := t.TempDir()
	ca, other := newTestCA(t), newTestCA(t)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caKey, _ := ca.KeyPEM()
	otherKey, _ := other.KeyPEM()
	leaf, leafKey, _ := ca.IssueClient("x", nil)
	tests := []struct {
		name     string
		cert     string
		key      string
		wantErr  bool
		wantCert *x509.Certificate
	}{
		{"round trip", write("ca.crt", ca.CertPEM), write("ca.key", caKey), false, ca.Cert},
		{"key of another CA", write("ca.crt", ca.CertPEM), write("other.key", otherKey), true, nil},
		{"not a CA", write("leaf.crt", leaf), write("leaf.key", leafKey), true, nil},
		{"missing file", filepath.Join(dir, "absent.crt"), write("ca.key", caKey), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadCA(tt.cert, tt.key)
			if (err != nil) != tt.wantErr {
				t.Fatalf("LoadCA() error = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && !got.Cert.Equal(tt.wantCert) {
				t.Errorf("LoadCA() certificate %q, want %q", got.Cert.Subject, tt.wantCert.Subject)
			}
		})
	}
	loaded, err := LoadCA(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	cert, _, err := loaded.IssueServing([]string{"localhost"})
	if err != nil {
		t.Fatalf("IssueServing() with a loaded CA error = %v", err)
	}
	if _, err := parseOne(t, cert).Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "localhost"}); err != nil {
		t.Errorf("certificate issued by a loaded CA does not verify: %v", err)
	}
}

func TestHostsSplit(t *testing.T) {
	ca := newTestCA(t)
	certPEM, _, err := ca.IssueServing([]string{"10.0.0.1", "svc.ns.svc"})
	if err != nil {
		t.Fatal(err)
	}
	cert := parseOne(t, certPEM)
	if len(cert.IPAddresses) != 1 || !cert.IPAddresses[0].Equal(net.ParseIP("10.0.0.1")) {
		t.Errorf("IPAddresses = %v, want [10.0.0.1]", cert.IPAddresses)
	}
	if !slices.Equal(cert.DNSNames, []string{"svc.ns.svc"}) {
		t.Errorf("DNSNames = %v, want [svc.ns.svc]", cert.DNSNames)
	}
}

func FuzzParsePEM(f *testing.F) {
	ca, err := NewCA("fuzz")
	if err != nil {
		f.Fatal(err)
	}
	key, _ := ca.KeyPEM()
	f.Add(ca.CertPEM)
	f.Add(key)
	f.Add([]byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if certs, err := ParseCertsPEM(data); err == nil && len(certs) == 0 {
			t.Errorf("ParseCertsPEM() = no certificates, nil error")
		}
		if k, err := ParsePrivateKeyPEM(data); err == nil && k == nil {
			t.Errorf("ParsePrivateKeyPEM() = nil key, nil error")
		}
	})
}
