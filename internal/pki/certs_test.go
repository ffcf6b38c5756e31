package pki

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkServingFiles verifies tls.crt against ca.crt, as a webhook client
// would, for every host, and the modes of the four files.
func checkServingFiles(t *testing.T, dir string, hosts []string) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(readFile(t, filepath.Join(dir, CACertFile))) {
		t.Fatalf("%s holds no certificate", CACertFile)
	}
	pair, err := tls.X509KeyPair(readFile(t, filepath.Join(dir, TLSCertFile)), readFile(t, filepath.Join(dir, TLSKeyFile)))
	if err != nil {
		t.Fatalf("tls.crt and tls.key do not belong together: %v", err)
	}
	for _, h := range hosts {
		if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: h}); err != nil {
			t.Errorf("tls.crt for %q does not verify against ca.crt: %v", h, err)
		}
	}
	for name, want := range map[string]os.FileMode{CACertFile: 0o644, CAKeyFile: 0o600, TLSCertFile: 0o644, TLSKeyFile: 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("mode of %s = %v, want %v", name, got, want)
		}
	}
}

func TestWriteServingFilesCreatesThenReusesTheCA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	hosts := []string{"hook.tools.svc", "hook.tools.svc.cluster.local", "127.0.0.1", "*.hooks.example.com"}
	first, err := WriteServingFiles(dir, hosts)
	if err != nil {
		t.Fatalf("WriteServingFiles() error = %v", err)
	}
	if first.CAReused || !slices.Equal(first.Written, []string{CAKeyFile, CACertFile, TLSKeyFile, TLSCertFile}) {
		t.Errorf("first WriteServingFiles() CAReused = %v, Written = %v, want false and all four files", first.CAReused, first.Written)
	}
	checkServingFiles(t, dir, []string{"hook.tools.svc", "hook.tools.svc.cluster.local", "127.0.0.1", "a.hooks.example.com"})
	if cn := first.CA.Cert.Subject.CommonName; cn != webhookCAName {
		t.Errorf("CA common name = %q, want %q", cn, webhookCAName)
	}
	caPEM := readFile(t, filepath.Join(dir, CACertFile))
	firstLeaf := readFile(t, filepath.Join(dir, TLSCertFile))

	second, err := WriteServingFiles(dir, []string{"other.tools.svc"})
	if err != nil {
		t.Fatalf("second WriteServingFiles() error = %v", err)
	}
	if !second.CAReused || !slices.Equal(second.Written, []string{TLSKeyFile, TLSCertFile}) {
		t.Errorf("second WriteServingFiles() CAReused = %v, Written = %v, want true and only tls.key, tls.crt", second.CAReused, second.Written)
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, CACertFile)), caPEM) {
		t.Errorf("ca.crt changed on the second call, want it reused")
	}
	if bytes.Equal(second.CertPEM, firstLeaf) {
		t.Errorf("tls.crt unchanged on the second call, want a new leaf for the new hosts")
	}
	checkServingFiles(t, dir, []string{"other.tools.svc"})
}

// The CA of `admitd serve`'s data directory has the same file names, so a
// webhook's certificate can be issued from it.
func TestWriteServingFilesReusesTheServeCA(t *testing.T) {
	dir := t.TempDir()
	b, err := EnsureServingBundle(dir, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := WriteServingFiles(dir, []string{"hook.default.svc"})
	if err != nil {
		t.Fatalf("WriteServingFiles() error = %v", err)
	}
	if !f.CAReused || !f.CA.Cert.Equal(b.CA.Cert) {
		t.Errorf("WriteServingFiles() in a serve data directory: CAReused = %v, same CA = %v, want true, true", f.CAReused, f.CA.Cert.Equal(b.CA.Cert))
	}
	checkServingFiles(t, dir, []string{"hook.default.svc"})
}

func TestWriteServingFilesErrors(t *testing.T) {
	otherKey, err := NewCA("other")
	if err != nil {
		t.Fatal(err)
	}
	otherKeyPEM, _ := otherKey.KeyPEM()
	ca, err := NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		hosts []string
		files map[string][]byte
		want  string
	}{
		{name: "no hosts", want: "at least one host"},
		{name: "empty host", hosts: []string{"a.svc", ""}, want: `host ""`},
		{name: "upper case", hosts: []string{"Hook.svc"}, want: `host "Hook.svc" is neither`},
		{name: "URL", hosts: []string{"https://hook.svc"}, want: `host "https://hook.svc"`},
		{name: "ca.crt without ca.key", hosts: []string{"a.svc"}, files: map[string][]byte{CACertFile: ca.CertPEM}, want: "exists without ca.key"},
		{name: "ca.key without ca.crt", hosts: []string{"a.svc"}, files: map[string][]byte{CAKeyFile: otherKeyPEM}, want: "exists without ca.crt"},
		{name: "mismatched pair", hosts: []string{"a.svc"}, files: map[string][]byte{CACertFile: ca.CertPEM, CAKeyFile: otherKeyPEM}, want: "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := WriteServingFiles(dir, tc.hosts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("WriteServingFiles(%q) error = %v, want one containing %q", tc.hosts, err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, TLSCertFile)); err == nil {
				t.Errorf("WriteServingFiles(%q) failed but wrote %s", tc.hosts, TLSCertFile)
			}
		})
	}
}
