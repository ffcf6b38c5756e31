package server

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/dashboard"
)

// httpClient is a plain HTTPS client of s: as the admin, or with no
// credentials at all.
func httpClient(t *testing.T, s *Server, admin bool) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	cfg := &tls.Config{RootCAs: pool}
	if admin {
		cert, err := tls.X509KeyPair(s.AdminCertPEM, s.AdminKeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// getCode GETs path with c and returns the status code and body.
func getCode(t *testing.T, c *http.Client, s *Server, path string) (int, string) {
	t.Helper()
	resp, err := c.Get(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestDashboardAuthorization: the dashboard and its API are behind the
// server's authentication (no credentials: 401) and authorization (a user
// RBAC grants nothing: 403, with upstream's words; the admin: 200), and a
// ClusterRole with dashboard.ClusterRoleRules opens it to a user.
func TestDashboardAuthorization(t *testing.T) {
	s, admin := startRBAC(t)
	anonymous, adminHTTP := httpClient(t, s, false), httpClient(t, s, true)
	alice := rest.CopyConfig(admin)
	alice.Impersonate = rest.ImpersonationConfig{UserName: "alice"}
	aliceREST := kubernetes.NewForConfigOrDie(alice).Discovery().RESTClient()
	paths := []string{"/dashboard/", "/dashboard/app.js", "/dashboard/api/config", "/dashboard/api/stats", "/dashboard/api/decisions", "/dashboard/api/traces/nope"}
	for _, p := range paths {
		if code, body := getCode(t, anonymous, s, p); code != http.StatusUnauthorized {
			t.Errorf("anonymous GET %s = %d %s, want 401", p, code, body)
		}
		err := aliceREST.Get().AbsPath(p).Do(t.Context()).Error()
		if err == nil || !strings.Contains(err.Error(), `User "alice" cannot get path "`+p+`"`) {
			t.Errorf("alice GET %s: %v, want 403 forbidden", p, err)
		}
		want := http.StatusOK
		if strings.HasSuffix(p, "/nope") {
			want = http.StatusNotFound
		}
		if code, body := getCode(t, adminHTTP, s, p); code != want {
			t.Errorf("admin GET %s = %d %s, want %d", p, code, body, want)
		}
	}
	if code, _ := getCode(t, adminHTTP, s, "/dashboard/nope"); code != http.StatusNotFound {
		t.Errorf("admin GET /dashboard/nope = %d, want 404", code)
	}

	c := kubernetes.NewForConfigOrDie(admin)
	var rules []rbacv1.PolicyRule
	rules = append(rules, rbacv1.PolicyRule{NonResourceURLs: []string{dashboard.Path, dashboard.Path + "/*"}, Verbs: []string{"get"}})
	if !strings.Contains(dashboard.ClusterRoleRules, `"/dashboard", "/dashboard/*"`) {
		t.Fatalf("ClusterRoleRules = %q, not the rule this test grants", dashboard.ClusterRoleRules)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "dashboard-viewer"}, Rules: rules}
	if _, err := c.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-dashboard"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "dashboard-viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths[:5] {
		if err := aliceREST.Get().AbsPath(p).Do(t.Context()).Error(); err != nil {
			t.Errorf("alice GET %s with the dashboard role: %v, want 200", p, err)
		}
	}
}

// TestDashboardStreamsDecisions: an admitted request arrives on the event
// stream with its facts, and the stream ends on the server when its client
// goes.
func TestDashboardStreamsDecisions(t *testing.T) {
	s, admin := startRBAC(t)
	c := httpClient(t, s, true)
	resp, err := c.Get(s.URL + "/dashboard/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("GET events = %d %q, want 200 text/event-stream", resp.StatusCode, ct)
	}
	events := readEvents(resp.Body)
	if first := <-events; first.comment != "connected" {
		t.Fatalf("first event %+v, want the connected comment", first)
	}
	if _, err := kubernetes.NewForConfigOrDie(admin).CoreV1().ConfigMaps("default").Create(t.Context(), configMap("streamed"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for found := false; !found; {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the stream ended before the configmap's decision")
			}
			if ev.name != "decision" {
				continue
			}
			var d dashboard.Decision
			if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
				t.Fatalf("decoding %q: %v", ev.data, err)
			}
			found = d.Name == "streamed"
			if found && (d.Decision != "Allowed" || d.Verb != "create" || d.Resource != "configmaps" || d.Namespace != "default" ||
				d.User != "admitd-admin" || d.AuditID == "" || ev.id == "" || d.LatencyMillis <= 0) {
				t.Errorf("decision %+v (id %q), want an allowed create of configmaps default/streamed by admitd-admin", d, ev.id)
			}
		case <-deadline:
			t.Fatal("no decision event for the configmap within 10s")
		}
	}
	if n := dashboardStats(t, c, s).Streams; n != 1 {
		t.Errorf("streams = %d while one is open, want 1", n)
	}
	resp.Body.Close()
	c.Transport.(*http.Transport).CloseIdleConnections()
	for start := time.Now(); dashboardStats(t, c, s).Streams != 0; time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the stream still open on the server 10s after its client went")
		}
	}
}

func dashboardStats(t *testing.T, c *http.Client, s *Server) dashboard.Stats {
	t.Helper()
	code, body := getCode(t, c, s, "/dashboard/api/stats")
	var st dashboard.Stats
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil {
		t.Fatalf("GET stats = %d %s (%v)", code, body, err)
	}
	return st
}

// sseEvent is one server-sent event, or a comment line.
type sseEvent struct{ name, id, data, comment string }

// readEvents parses a server-sent event stream until it ends.
func readEvents(r io.Reader) <-chan sseEvent {
	out := make(chan sseEvent, 16)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					out <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ": "):
				ev.comment = line[2:]
			default:
				k, v, _ := strings.Cut(line, ": ")
				switch k {
				case "event":
					ev.name = v
				case "id":
					ev.id = v
				case "data":
					ev.data += v
				}
			}
		}
	}()
	return out
}
