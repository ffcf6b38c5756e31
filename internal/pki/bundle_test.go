package pki

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

var allFiles = []string{CACertFile, CAKeyFile, ServingCertFile, ServingKeyFile, AdminCertFile, AdminKeyFile}

func ensure(t *testing.T, dir string, hosts ...string) Bundle {
	t.Helper()
	b, err := EnsureServingBundle(dir, hosts)
	if err != nil {
		t.Fatalf("EnsureServingBundle(%q) error = %v", hosts, err)
	}
	return b
}

func TestEnsureServingBundleCreates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	b := ensure(t, dir, "localhost", "127.0.0.1")
	if !slices.Equal(sorted(b.Written), sorted(allFiles)) {
		t.Errorf("EnsureServingBundle() wrote %q, want %q", b.Written, allFiles)
	}
	for _, name := range allFiles {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o644)
		if strings.HasSuffix(name, ".key") {
			want = 0o600
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("mode of %s = %v, want %v", name, got, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(allFiles) {
		t.Errorf("%s holds %d entries, want %d (no temporary files left)", dir, len(entries), len(allFiles))
	}
	admin := parseOne(t, b.AdminCertPEM)
	if admin.Subject.CommonName != AdminUser || !slices.Equal(admin.Subject.Organization, []string{AdminGroup}) {
		t.Errorf("admin subject = %v, want CN=%s O=%s", admin.Subject, AdminUser, AdminGroup)
	}
	if _, err := admin.Verify(x509.VerifyOptions{Roots: b.CA.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate does not verify as a client: %v", err)
	}
	if _, err := b.ServingCertificate(); err != nil {
		t.Errorf("ServingCertificate() error = %v", err)
	}
}

func TestEnsureServingBundleIdempotent(t *testing.T) {
	dir := t.TempDir()
	first := ensure(t, dir, "localhost", "127.0.0.1")
	second := ensure(t, dir, "127.0.0.1", "localhost")
	if len(second.Written) != 0 {
		t.Errorf("second EnsureServingBundle() wrote %q, want nothing", second.Written)
	}
	for _, c := range []struct {
		name      string
		got, want []byte
	}{
		{"CA", second.CA.CertPEM, first.CA.CertPEM},
		{"serving cert", second.ServingCertPEM, first.ServingCertPEM},
		{"serving key", second.ServingKeyPEM, first.ServingKeyPEM},
		{"admin cert", second.AdminCertPEM, first.AdminCertPEM},
		{"admin key", second.AdminKeyPEM, first.AdminKeyPEM},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Equal(c.got, c.want) {
				t.Errorf("second EnsureServingBundle() %s differs from the first", c.name)
			}
		})
	}
}

func TestEnsureServingBundleRepairs(t *testing.T) {
	tests := []struct {
		name       string
		change     func(t *testing.T, dir string)
		hosts      []string
		wantWrites []string
		wantSameCA bool
	}{
		{
			name:       "missing file regenerates everything",
			change:     func(t *testing.T, dir string) { remove(t, dir, AdminKeyFile) },
			hosts:      []string{"localhost"},
			wantWrites: allFiles,
		},
		{
			name:       "new host re-issues the serving certificate only",
			change:     func(*testing.T, string) {},
			hosts:      []string{"localhost", "admitd.test"},
			wantWrites: []string{ServingCertFile, ServingKeyFile},
			wantSameCA: true,
		},
		{
			name: "leaves of a replaced CA are re-issued",
			change: func(t *testing.T, dir string) {
				ca := newTestCA(t)
				key, _ := ca.KeyPEM()
				writeFile(t, dir, CACertFile, ca.CertPEM)
				writeFile(t, dir, CAKeyFile, key)
			},
			hosts:      []string{"localhost"},
			wantWrites: []string{ServingCertFile, ServingKeyFile, AdminCertFile, AdminKeyFile},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			first := ensure(t, dir, "localhost")
			tt.change(t, dir)
			got := ensure(t, dir, tt.hosts...)
			if !slices.Equal(sorted(got.Written), sorted(tt.wantWrites)) {
				t.Errorf("EnsureServingBundle() wrote %q, want %q", got.Written, tt.wantWrites)
			}
			if same := bytes.Equal(got.CA.CertPEM, first.CA.CertPEM); same != tt.wantSameCA {
				t.Errorf("EnsureServingBundle() kept the CA = %v, want %v", same, tt.wantSameCA)
			}
			serving := parseOne(t, got.ServingCertPEM)
			for _, h := range tt.hosts {
				if _, err := serving.Verify(x509.VerifyOptions{Roots: got.CA.Pool(), DNSName: h}); err != nil {
					t.Errorf("serving certificate for %q: %v", h, err)
				}
			}
			again := ensure(t, dir, tt.hosts...)
			if len(again.Written) != 0 {
				t.Errorf("EnsureServingBundle() after repair wrote %q, want nothing", again.Written)
			}
		})
	}
}

func TestEnsureServingBundleErrors(t *testing.T) {
	dir := t.TempDir()
	ensure(t, dir, "localhost")
	writeFile(t, dir, ServingKeyFile, []byte("not a key"))
	if _, err := EnsureServingBundle(dir, []string{"localhost"}); err == nil {
		t.Errorf("EnsureServingBundle() with a damaged key error = nil, want an error")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ServingKeyFile)); string(got) != "not a key" {
		t.Errorf("EnsureServingBundle() overwrote a damaged key, want it left alone")
	}
	if _, err := EnsureServingBundle(t.TempDir(), nil); err == nil {
		t.Errorf("EnsureServingBundle(no hosts) error = nil, want an error")
	}
}

func TestWriteKubeconfig(t *testing.T) {
	b := ensure(t, t.TempDir(), "127.0.0.1")
	path := filepath.Join(t.TempDir(), "sub", "admin.kubeconfig")

	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	serving, err := b.ServingCertificate()
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{serving},
		ClientCAs:    b.CA.Pool(),
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}
	srv.StartTLS()
	defer srv.Close()

	if err := WriteKubeconfig(path, srv.URL, b.CA.CertPEM, b.AdminCertPEM, b.AdminKeyPEM); err != nil {
		t.Fatalf("WriteKubeconfig() error = %v", err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode = %v, %v, want 0600", info.Mode().Perm(), err)
	}
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatalf("clientcmd.LoadFromFile() error = %v", err)
	}
	if raw.CurrentContext != KubeconfigName {
		t.Errorf("current-context = %q, want %q", raw.CurrentContext, KubeconfigName)
	}
	if c := raw.Clusters[KubeconfigName]; c == nil || c.CertificateAuthority != "" || len(c.CertificateAuthorityData) == 0 {
		t.Errorf("cluster %q = %+v, want embedded CA data", KubeconfigName, c)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("BuildConfigFromFlags() error = %v", err)
	}
	checks := []struct {
		name      string
		got, want []byte
	}{
		{"host", []byte(cfg.Host), []byte(srv.URL)},
		{"CA data", cfg.CAData, b.CA.CertPEM},
		{"cert data", cfg.CertData, b.AdminCertPEM},
		{"key data", cfg.KeyData, b.AdminKeyPEM},
	}
	for _, c := range checks {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("rest.Config %s = %q, want %q", c.name, c.got, c.want)
		}
	}

	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatalf("rest.HTTPClientFor() error = %v", err)
	}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatalf("GET with the kubeconfig's TLS settings: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != AdminUser {
		t.Errorf("GET = %d %q, want 200 %q", resp.StatusCode, body, AdminUser)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func remove(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
}
