package samplewebhook

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/pki"
)

// startRun runs the webhook with generated certificates on a free port and
// returns the address it reports serving on, the base URL to reach it on
// 127.0.0.1, and a client that trusts it.
func startRun(t *testing.T, o Options) (served, base string, client *http.Client, stop func() error) {
	t.Helper()
	ca, err := pki.NewCA("samplewebhook-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueServing([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o.CertFile, o.KeyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(o.CertFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.KeyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out, lines := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o, lines); lines.Close() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, out) }()
	served, found := strings.CutPrefix(strings.TrimSpace(line), "admitd webhook serving on https://")
	_, port, splitErr := net.SplitHostPort(served)
	if err != nil || !found || splitErr != nil {
		cancel()
		t.Fatalf("serving line %q: %v (Run: %v)", line, err, <-done)
	}
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			t.Fatal("Run did not return after the context was cancelled")
			return nil
		}
	}
	t.Cleanup(func() { cancel() })
	client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	return served, "https://127.0.0.1:" + port, client, stop
}

func postReview(ctx context.Context, c *http.Client, url, body string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.Status[:3] + " " + string(b), err
}

func TestRunServesOverTLS(t *testing.T) {
	_, base, client, stop := startRun(t, Options{Port: 0})
	resp, err := client.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok" {
		t.Errorf("GET /readyz = %d %q, want 200 ok", resp.StatusCode, body)
	}
	// An aborted request reaches the client as a transport error, no answer.
	cmReview := review("v1", vector{resource: rCM, object: "{}"}.request())
	if got, err := postReview(context.Background(), client, base+"/mutating-pods", cmReview); err == nil {
		t.Errorf("/mutating-pods with a configmap answered %q, want no answer", got)
	}

	// X2: every call is answered while slow and hanging ones are in flight.
	slowCtx, cancelSlow := context.WithCancel(context.Background())
	defer cancelSlow()
	go func() {
		_, _ = postReview(slowCtx, client, base+"/always-allow-delay-5s", review("v1", vector{}.request()))
	}()
	go func() {
		_, _ = postReview(slowCtx, client, base+"/pods", review("v1", vector{object: labels(`{"webhook-e2e-test":"wait-forever"}`)}.request()))
	}()
	var wg sync.WaitGroup
	start := time.Now()
	for range 50 {
		wg.Go(func() {
			got, err := postReview(context.Background(), client, base+"/always-deny", review("v1", vector{}.request()))
			if err != nil || !strings.Contains(got, `"message":"this webhook denies all requests"`) {
				t.Errorf("/always-deny = %q, %v", got, err)
			}
		})
	}
	wg.Wait()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("50 parallel /always-deny took %v", took)
	}
	cancelSlow()
	// Connections the client dialled but never used would hold up the
	// shutdown for 5s (net/http waits that long for a first request).
	client.CloseIdleConnections()
	if err := stop(); err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
}

func TestRunNeedsCertificate(t *testing.T) {
	err := Run(context.Background(), Options{Port: 0}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "open : no such file or directory") {
		t.Errorf("Run without certificate files = %v, want upstream's open error", err)
	}
}

// TestRunBindAddress: without BindAddress the webhook listens on 127.0.0.1
// only; 0.0.0.0 is every interface (Go reports it as [::]), 127.0.0.1
// included.
func TestRunBindAddress(t *testing.T) {
	for _, tc := range []struct {
		bind net.IP
		want string
		is   func(net.IP) bool
	}{
		{nil, "loopback", net.IP.IsLoopback},
		{net.IPv4zero, "every interface", net.IP.IsUnspecified},
	} {
		served, base, client, stop := startRun(t, Options{BindAddress: tc.bind})
		if host, _, _ := net.SplitHostPort(served); !tc.is(net.ParseIP(host)) {
			t.Errorf("Run with BindAddress %v serves on %s, want %s", tc.bind, served, tc.want)
		}
		resp, err := client.Get(base + "/readyz")
		if err != nil {
			t.Fatalf("GET /readyz with BindAddress %v: %v", tc.bind, err)
		}
		resp.Body.Close()
		client.CloseIdleConnections()
		if err := stop(); err != nil {
			t.Errorf("Run with BindAddress %v after cancel = %v, want nil", tc.bind, err)
		}
	}
}
