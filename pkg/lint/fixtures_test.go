package lint

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fixture is a testdata file with its expectations, read from its leading
// comments: "# want: AL001 AL002" (the rule IDs it must produce, and no
// others) and "# probe: true".
type fixture struct {
	name  string
	text  string
	want  []string
	probe bool
}

func readFixtures(t *testing.T) []fixture {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var out []fixture
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := fixture{name: filepath.Base(p), text: string(data)}
		for _, line := range strings.Split(f.text, "\n") {
			if rest, ok := strings.CutPrefix(line, "# want:"); ok {
				f.want = strings.Fields(rest)
			}
			if strings.TrimSpace(line) == "# probe: true" {
				f.probe = true
			}
		}
		out = append(out, f)
	}
	return out
}

// TestFixtures lints every fixture and checks that it produces exactly
// the rule IDs it declares: each lint is triggered by its own fixture,
// and the sample webhook's configuration produces none.
func TestFixtures(t *testing.T) {
	servers := startProbeServers(t)
	covered := map[string]bool{}
	for _, f := range readFixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			s := &Set{}
			if err := s.Decode(strings.NewReader(servers.expand(f.text)), f.name); err != nil {
				t.Fatal(err)
			}
			fs := Run(context.Background(), s, Options{Probe: f.probe, ProbeTimeout: 2 * time.Second})
			got := ids(fs)
			if !slices.Equal(got, f.want) {
				var b bytes.Buffer
				_ = WriteText(&b, fs)
				t.Errorf("Run(%s) found %v, want %v\n%s", f.name, got, f.want, b.String())
			}
			for _, id := range got {
				covered[id] = true
			}
			for _, fd := range fs {
				if fd.Message == "" || fd.Why == "" || fd.Fix == "" || fd.Object.Name == "" {
					t.Errorf("finding %+v lacks a message, why, fix or object", fd)
				}
			}
		})
	}
	for _, r := range Rules() {
		if !covered[r.ID] {
			t.Errorf("rule %s (%s) is triggered by no fixture", r.ID, r.Title)
		}
	}
}

// ids returns the distinct rule IDs of fs, sorted.
func ids(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if !slices.Contains(out, f.ID) {
			out = append(out, f.ID)
		}
	}
	slices.Sort(out)
	return out
}

// probeServers are the TLS servers the probe fixtures point at.
type probeServers struct {
	wrongCA, expiring, caBundle, expiringCA, closed string
}

func (p probeServers) expand(text string) string {
	r := strings.NewReplacer("{{CLOSED}}", p.closed)
	text = r.Replace(text)
	switch {
	case strings.Contains(text, "name: wrong-ca"):
		return strings.NewReplacer("{{URL}}", p.wrongCA, "{{CABUNDLE}}", p.caBundle).Replace(text)
	case strings.Contains(text, "name: expiring"):
		return strings.NewReplacer("{{URL}}", p.expiring, "{{CABUNDLE}}", p.expiringCA).Replace(text)
	}
	return text
}

func startProbeServers(t *testing.T) probeServers {
	t.Helper()
	servingCA, otherCA := newTestCA(t, "serving-ca"), newTestCA(t, "other-ca")
	wrong := startTLS(t, servingCA.issue(t, 365*24*time.Hour))
	expiring := startTLS(t, servingCA.issue(t, 10*24*time.Hour))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	return probeServers{
		wrongCA: wrong, expiring: expiring, closed: closed,
		caBundle:   base64.StdEncoding.EncodeToString(otherCA.certPEM),
		expiringCA: base64.StdEncoding.EncodeToString(servingCA.certPEM),
	}
}

func startTLS(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}
