package etcd_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/test/etcd/etcdtest"
)

// The etcd checks of the health endpoints are real, as kube-apiserver's:
// while the only etcd member hangs (SIGSTOP), /readyz/etcd fails after the
// 2 s check timeout with kube-apiserver 1.37.2's answer (recorded from it
// with its etcd stopped the same way), /readyz and /livez list the etcd
// checks failed, and once etcd answers again they pass.
func TestHealthChecksFollowEtcd(t *testing.T) {
	c := etcdtest.StartProcesses(t, 1)
	cfg, _ := startServer(t, c.Endpoints(), 0)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := hc.Get(cfg.Host + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/readyz/etcd"); code != 200 || body != "ok" {
		t.Fatalf("GET /readyz/etcd = %d %q, want 200 ok", code, body)
	}
	member := c.Members[0]
	member.Pause()
	paused := true
	defer func() {
		if paused {
			member.Resume()
		}
	}()
	time.Sleep(time.Second) // past the rate limit of the checks (half their timeout)
	start := time.Now()
	code, body := get("/readyz/etcd")
	took := time.Since(start)
	if code != http.StatusInternalServerError || body != "internal server error: error getting data from etcd: context deadline exceeded\n" {
		t.Errorf("GET /readyz/etcd with etcd stopped = %d %q", code, body)
	}
	if took < 2*time.Second || took > 5*time.Second {
		t.Errorf("GET /readyz/etcd with etcd stopped took %s, want the 2s check timeout", took)
	}
	code, body = get("/readyz")
	if code != 500 || !strings.Contains(body, "[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\n") || !strings.HasSuffix(body, "readyz check failed\n") {
		t.Errorf("GET /readyz with etcd stopped = %d %q", code, body)
	}
	if code, body = get("/livez?verbose"); code != 500 || !strings.Contains(body, "[-]etcd failed: reason withheld\n") {
		t.Errorf("GET /livez?verbose with etcd stopped = %d %q", code, body)
	}
	member.Resume()
	paused = false
	deadline := time.Now().Add(10 * time.Second)
	for code, body = get("/readyz"); code != 200; code, body = get("/readyz") {
		if time.Now().After(deadline) {
			t.Fatalf("GET /readyz 10s after etcd resumed = %d %q", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("/readyz/etcd failed after %s with etcd stopped", took.Round(time.Millisecond))
}
