package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// getHealth GETs path of s as the admin and returns the status and body.
func getHealth(t *testing.T, s *Server, path string) (int, string) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	cert, err := tls.X509KeyPair(s.AdminCertPEM, s.AdminKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}}
	resp, err := c.Get(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// checkNames are the check names of a verbose health answer, in order.
func checkNames(body string) []string {
	var names []string
	for _, line := range strings.Split(body, "\n") {
		if name, ok := strings.CutPrefix(line, "[+]"); ok {
			names = append(names, strings.TrimSuffix(name, " ok"))
		}
	}
	return names
}

// Each health endpoint lists the checks of kube-apiserver 1.37.2 that
// admitd has (testdata/health: recorded from it with default flags), in
// its order; a check upstream does not list would be an invention.
func TestHealthChecksAreUpstreams(t *testing.T) {
	o := testOptions(t)
	o.Storage = "bolt"
	s, _ := startWith(t, o)
	admitdOnly := map[string][]string{
		"readyz": {"ping", "log", "etcd", "etcd-readiness", "informer-sync"},
		"livez":  {"ping", "log", "etcd"},
	}
	admitdOnly["healthz"] = admitdOnly["livez"]
	hooks := []string{"start-apiserver-admission-initializer", "generic-apiserver-start-informers",
		"priority-and-fairness-config-consumer", "priority-and-fairness-filter", "storage-object-count-tracker-hook",
		"start-apiextensions-informers", "start-apiextensions-controllers", "crd-informer-synced",
		"start-system-namespaces-controller", "start-cluster-authentication-info-controller",
		"start-kube-apiserver-identity-lease-controller", "start-kube-apiserver-identity-lease-garbage-collector",
		"start-legacy-token-tracking-controller", "start-service-ip-repair-controllers", "rbac/bootstrap-roles",
		"scheduling/bootstrap-system-priority-classes", "priority-and-fairness-config-producer", "bootstrap-controller",
		"start-kubernetes-service-cidr-controller", "start-kube-aggregator-informers", "apiservice-status-local-available-controller",
		"apiservice-status-remote-available-controller", "apiservice-registration-controller", "apiservice-discovery-controller",
		"kube-apiserver-autoregistration", "autoregister-completion", "apiservice-openapi-controller", "apiservice-openapiv3-controller"}
	for _, endpoint := range []string{"readyz", "livez", "healthz"} {
		recorded, err := os.ReadFile(filepath.Join("testdata", "health", "kube-apiserver-1.37.2-"+endpoint+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		upstream := checkNames(string(recorded))
		code, body := getHealth(t, s, "/"+endpoint+"?verbose")
		got := checkNames(body)
		want := slices.Clone(admitdOnly[endpoint])
		for _, h := range hooks {
			if h != "autoregister-completion" { // a check of its own, not a hook's
				h = "poststarthook/" + h
			}
			want = append(want, h)
		}
		if endpoint == "readyz" {
			want = append(want, "shutdown")
		}
		if code != 200 || !slices.Equal(got, want) {
			t.Errorf("GET /%s?verbose = %d, checks\n%q\nwant\n%q", endpoint, code, got, want)
		}
		if i, ok := inOrder(got, upstream); !ok {
			t.Errorf("/%s check %q is not among kube-apiserver's, or not in its order:\n%q", endpoint, got[i], upstream)
		}
	}
	if code, body := getHealth(t, s, "/readyz/poststarthook/rbac/bootstrap-roles"); code != 200 || body != "ok" {
		t.Errorf("GET /readyz/poststarthook/rbac/bootstrap-roles = %d %q, want 200 ok", code, body)
	}
}

// inOrder reports whether every name of got is in want, in want's order;
// else the index in got of the first that is not.
func inOrder(got, want []string) (int, bool) {
	j := 0
	for i, name := range got {
		k := slices.Index(want[j:], name)
		if k < 0 {
			return i, false
		}
		j += k + 1
	}
	return 0, true
}

// The storage check is real: once the bolt store is closed, /readyz/etcd
// fails with the store's reason and /readyz with the check withheld.
func TestHealthChecksStorage(t *testing.T) {
	o := testOptions(t)
	o.Storage = "bolt"
	o.Etcd.HealthcheckTimeout, o.Etcd.ReadycheckTimeout = 100*time.Millisecond, 100*time.Millisecond
	s, _ := startWith(t, o)
	if code, body := getHealth(t, s, "/readyz/etcd"); code != 200 || body != "ok" {
		t.Fatalf("GET /readyz/etcd = %d %q, want 200 ok", code, body)
	}
	if err := s.store.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // past the checks' rate limit (half their timeout)
	if code, body := getHealth(t, s, "/livez/etcd"); code != 500 || body != "internal server error: bolt: the store is closed\n" {
		t.Errorf("GET /livez/etcd after closing the store = %d %q", code, body)
	}
	code, body := getHealth(t, s, "/readyz")
	if code != 500 || !strings.Contains(body, "[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\n") {
		t.Errorf("GET /readyz after closing the store = %d %q", code, body)
	}
}

// A storage check probes at most once per half timeout (checks in between
// get the last answer), bounds each probe by the timeout, and answers
// upstream's "not yet established" until its first probe returns.
func TestStorageCheckRateAndTimeout(t *testing.T) {
	var probes atomic.Int32
	failing := atomic.Bool{}
	probe := func(ctx context.Context) error {
		probes.Add(1)
		if failing.Load() {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	now := time.Unix(1000, 0)
	c := &storageCheck{probe: probe, timeout: 2 * time.Second, now: func() time.Time { return now }, last: errNotProbed}
	if err := c.check(context.Background()); err != nil || probes.Load() != 1 {
		t.Fatalf("first check = %v after %d probes, want nil after 1", err, probes.Load())
	}
	failing.Store(true)
	now = now.Add(999 * time.Millisecond)
	if err := c.check(context.Background()); err != nil || probes.Load() != 1 {
		t.Errorf("check within half the timeout = %v after %d probes, want the last answer (nil) after 1", err, probes.Load())
	}
	c.timeout = 50 * time.Millisecond
	now = now.Add(time.Second)
	if err := c.check(context.Background()); !errors.Is(err, context.DeadlineExceeded) || probes.Load() != 2 {
		t.Errorf("check of a probe that hangs = %v after %d probes, want the deadline after 2", err, probes.Load())
	}
	if err := c.check(context.Background()); !errors.Is(err, context.DeadlineExceeded) || probes.Load() != 2 {
		t.Errorf("next check at once = %v after %d probes, want the deadline again after 2", err, probes.Load())
	}
	fresh := &storageCheck{probe: probe, timeout: time.Second, now: func() time.Time { return now }, last: errNotProbed, started: now}
	if err := fresh.check(context.Background()); !errors.Is(err, errNotProbed) {
		t.Errorf("check while the first probe runs = %v, want %v", err, errNotProbed)
	}
}
