package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// issueFiles writes a new serving certificate for 127.0.0.1 from ca to
// certFile and keyFile, and returns its serial number.
func issueFiles(t *testing.T, ca *webhooktest.CA, certFile, keyFile string) int64 {
	t.Helper()
	certPEM, keyPEM, err := ca.IssuePEM("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, certFile, certPEM)
	writeFile(t, keyFile, keyPEM)
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert.SerialNumber.Int64()
}

func newCA(t *testing.T) *webhooktest.CA {
	t.Helper()
	ca, err := webhooktest.NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	return ca
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
	ca := newCA(t)
	first := issueFiles(t, ca, certFile, keyFile)
	mux := http.NewServeMux()
	mux.Handle("/allow", Serve(HandlerFunc(func(context.Context, Request) Response { return Allowed("") })))
	addr, _ := startServer(t, &Server{CertFile: certFile, KeyFile: keyFile, Handler: mux})

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}, ForceAttemptHTTP2: true}}
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

	if got := servedSerial(t, addr, ca.Pool()); got != first {
		t.Fatalf("serial = %d, want %d", got, first)
	}
	second := issueFiles(t, ca, certFile, keyFile) // rewritten in place
	if got := servedSerial(t, addr, ca.Pool()); got != second {
		t.Fatalf("after rewriting the files: serial = %d, want %d", got, second)
	}
	writeFile(t, certFile, []byte("not a certificate"))
	if got := servedSerial(t, addr, ca.Pool()); got != second {
		t.Fatalf("after a broken write: serial = %d, want the previous %d", got, second)
	}
	// Swapped in by rename, as a Kubernetes secret volume does.
	third := issueFiles(t, ca, certFile+".new", keyFile+".new")
	if err := os.Rename(keyFile+".new", keyFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(certFile+".new", certFile); err != nil {
		t.Fatal(err)
	}
	if got := servedSerial(t, addr, ca.Pool()); got != third {
		t.Fatalf("after renaming new files in place: serial = %d, want %d", got, third)
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
	ca := newCA(t)
	issueFiles(t, ca, certFile, keyFile)
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
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
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
	if _, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool()}); err == nil {
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
