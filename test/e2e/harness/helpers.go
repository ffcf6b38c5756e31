package harness

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// HTTPClient returns a client authenticated as the admin of a.
func (a *Admitd) HTTPClient(t *testing.T) *http.Client {
	t.Helper()
	cfg := a.RestConfig(t)
	cert, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CAData)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}}}
}

// WaitFor retries `kubectl get args` for up to 10s until it succeeds.
func (a *Admitd) WaitFor(t *testing.T, what string, args ...string) {
	t.Helper()
	var errOut string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var err error
		if _, errOut, err = a.Kubectl(t, "", args...); err == nil {
			return
		}
	}
	t.Fatalf("waiting for %s: %s", what, errOut)
}

// WantRefused runs kubectl and expects it to fail with want in its error.
func (a *Admitd) WantRefused(t *testing.T, stdin, want string, args ...string) {
	t.Helper()
	out, errOut, err := a.Kubectl(t, stdin, args...)
	if err == nil || !strings.Contains(errOut, want) {
		t.Fatalf("kubectl %s: err %v, stdout %q, stderr %q; want the error %q", strings.Join(args, " "), err, out, errOut, want)
	}
}

// Metrics is what the server's /metrics answers.
func (a *Admitd) Metrics(t *testing.T) string {
	t.Helper()
	resp, err := a.HTTPClient(t).Get(a.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}

// WithoutWorkloadControllers runs admitd without kube-controller-manager's
// workload controllers, for tests of objects written as a kube-apiserver
// alone keeps them.
const WithoutWorkloadControllers = "--controllers=*,-deployment-controller,-replicaset-controller,-replicationcontroller-controller,-statefulset-controller"

// LineDiff shows the lines of want and got that differ, by line number.
func LineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// RecordOrCompare writes got to file when recording a session on the real
// kube-apiserver and kube-controller-manager, and otherwise fails the test
// when got differs from that recording.
func RecordOrCompare(t *testing.T, record bool, file, got string) {
	t.Helper()
	if record {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("session differs from kube-controller-manager's (%s):\n%s\n--- got\n%s", file, LineDiff(string(want), got), got)
	}
}
