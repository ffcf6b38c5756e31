package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA issues serving certificates for 127.0.0.1 in tests (the SDK does
// not import admitd's internal PKI).
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue writes a serving certificate with serial to certFile and keyFile.
func (ca *testCA) issue(t *testing.T, serial int64, certFile, keyFile string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	writeFile(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// servedSerial opens a new TLS connection and returns the serial of the
// certificate the server presents.
func servedSerial(t *testing.T, addr string, pool *x509.CertPool) int64 {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

func startServer(t *testing.T, s *Server) (addr string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return after the context was cancelled")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	return ln.Addr().String(), stop
}

func TestServerReloadsCertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca := newTestCA(t)
	ca.issue(t, 100, certFile, keyFile)
	mux := http.NewServeMux()
	mux.Handle("/allow", Serve(HandlerFunc(func(context.Context, Request) Response { return Allowed("") })))
	addr, _ := startServer(t, &Server{CertFile: certFile, KeyFile: keyFile, Handler: mux})

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}, ForceAttemptHTTP2: true}}
	resp, err := client.Post("https://"+addr+"/allow", "application/json", strings.NewReader(reviewBody(versionV1, podRequest)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u-1","allowed":true}}`; string(body) != want || resp.Proto != "HTTP/2.0" {
		t.Errorf("POST /allow = %s %s, want HTTP/2.0 %s", resp.Proto, body, want)
	}
	if got := getBody(t, client, "https://"+addr+"/readyz"); got != "200 ok" {
		t.Errorf("GET /readyz = %q, want 200 ok", got)
	}

	if got := servedSerial(t, addr, ca.pool); got != 100 {
		t.Fatalf("serial = %d, want 100", got)
	}
	ca.issue(t, 101, certFile, keyFile) // rewritten in place
	if got := servedSerial(t, addr, ca.pool); got != 101 {
		t.Fatalf("after rewriting the files: serial = %d, want 101", got)
	}
	writeFile(t, certFile, []byte("not a certificate"))
	if got := servedSerial(t, addr, ca.pool); got != 101 {
		t.Fatalf("after a broken write: serial = %d, want the previous 101", got)
	}
	// Swapped in by rename, as a Kubernetes secret volume does.
	ca.issue(t, 102, certFile+".new", keyFile+".new")
	if err := os.Rename(keyFile+".new", keyFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(certFile+".new", certFile); err != nil {
		t.Fatal(err)
	}
	if got := servedSerial(t, addr, ca.pool); got != 102 {
		t.Fatalf("after renaming new files in place: serial = %d, want 102", got)
	}
	client.CloseIdleConnections()
}

func getBody(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.Status[:3] + " " + string(body)
}

func TestServerGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca := newTestCA(t)
	ca.issue(t, 1, certFile, keyFile)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	slow := Serve(HandlerFunc(func(context.Context, Request) Response {
		close(entered)
		<-release
		return Allowed("finished")
	}))
	// A TLSConfig instead of files.
	addr, stop := startServer(t, &Server{TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}, Handler: slow})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}}}
	answered := make(chan string, 1)
	go func() {
		resp, err := client.Post("https://"+addr+"/slow", "application/json", strings.NewReader(reviewBody(versionV1, podRequest)))
		if err != nil {
			answered <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- string(body)
	}()
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	time.Sleep(100 * time.Millisecond) // shutdown has begun and waits for the review
	select {
	case err := <-stopped:
		t.Fatalf("Serve returned (%v) while a review was in flight", err)
	default:
	}
	if _, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.pool}); err == nil {
		t.Error("a new connection was accepted during shutdown")
	}
	close(release)
	if got := <-answered; !strings.Contains(got, `"message":"finished"`) {
		t.Errorf("review in flight during shutdown = %s, want it answered", got)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Serve after shutdown = %v, want nil", err)
	}
}

func TestServerNeedsCertificate(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []*Server{
		{},
		{CertFile: filepath.Join(dir, "missing.crt"), KeyFile: filepath.Join(dir, "missing.key")},
	} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Serve(context.Background(), ln); err == nil {
			t.Errorf("Serve(%+v) = nil, want an error", s)
		}
	}
}

// TestServerDefaultAddrIsLoopback: a Server without Addr is reachable from
// this machine only, never from every interface.
func TestServerDefaultAddrIsLoopback(t *testing.T) {
	addr := (&Server{}).listenAddr()
	host, port, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() || port != "8443" {
		t.Errorf("listen address without Addr = %q, want a loopback IP and port 8443", addr)
	}
	if got := (&Server{Addr: ":9443"}).listenAddr(); got != ":9443" {
		t.Errorf("listen address with Addr :9443 = %q, want :9443", got)
	}
}
