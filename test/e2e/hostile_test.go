package e2e

// The hostile-client suite: mallory, a token user allowed nothing but
// configmaps in one namespace, and a client with a garbage token walk every
// route the server lists (hostile_walk_test.go) and send the configmaps
// endpoints bodies and parameters meant to break them
// (hostile_bodies_test.go). Every refusal must be upstream's (403 or 401 with
// a Status, a 4xx Status for a bad request), no answer may be a 5xx (but
// the 500 the real kube-apiserver gives a watch or get at a resourceVersion
// that does not parse), the
// server's memory stays bounded and mallory's objects are unchanged.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	malloryToken   = "mallory-token"
	garbageToken   = "garbage-0123456789abcdef"
	hostileNS      = "mine"  // where mallory may touch configmaps
	hostileOther   = "other" // where she may not
	hostileWorkers = 8
	cmPath         = "/api/v1/namespaces/" + hostileNS + "/configmaps"
	baselinePath   = cmPath + "/baseline" // only certain refusals are sent here
	scratchPath    = cmPath + "/scratch"  // what upstream might accept goes here
)

// hostileSetup is applied by the admin: the two namespaces, mallory's Role
// (configmaps in mine, no deletecollection) and the objects attacked.
const hostileSetup = `apiVersion: v1
kind: Namespace
metadata: {name: mine}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: configmaps-only, namespace: mine}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, patch, create, update, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: mallory-configmaps, namespace: mine}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: configmaps-only}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: mallory}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: baseline, namespace: mine, labels: {app: baseline}, annotations: {note: keep}}
data: {a: "1", b: two}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: scratch, namespace: mine}
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: theirs, namespace: other}
data: {a: "1"}
`

// TestHostileClient runs the whole attack against one server, then checks
// that it is still whole.
func TestHostileClient(t *testing.T) {
	t.Parallel()
	a := startHostile(t)
	hc := newHostileClient(t, a)
	before := hc.snapshot(t)
	idle := procStatusBytes(t, a.Cmd.Process.Pid, "VmRSS")
	peak := sampleRSS(a.Cmd.Process.Pid)

	resources, gvPaths := hc.discover(t)
	walk := walkProbes(resources, gvPaths)
	t.Run("walk as mallory", func(t *testing.T) { hc.run(t, walk, false) })
	t.Run("walk with a garbage token", func(t *testing.T) { hc.run(t, garbageTokenProbes(walk), false) })
	t.Run("bodies", func(t *testing.T) { hc.run(t, bodyProbes(), true) })
	t.Run("parameters", func(t *testing.T) { hc.run(t, paramProbes(), true) })

	maxRSS := peak.stop()
	hwm := procStatusBytes(t, a.Cmd.Process.Pid, "VmHWM")
	rss := procStatusBytes(t, a.Cmd.Process.Pid, "VmRSS")
	bound := max(4*idle, idle+512<<20)
	t.Logf("admitd RSS: idle %d MiB, peak sampled %d MiB, VmHWM %d MiB, after %d MiB, bound %d MiB",
		idle>>20, maxRSS>>20, hwm>>20, rss>>20, bound>>20)
	if hwm > bound || rss > bound {
		t.Errorf("admitd VmHWM = %d MiB, VmRSS = %d MiB after the attack, want both under %d MiB (idle %d MiB)", hwm>>20, rss>>20, bound>>20, idle>>20)
	}

	out := a.MustKubectl(t, "", "get", "configmaps", "-n", hostileNS, "-o", "name")
	if !strings.Contains(out, "configmap/baseline") {
		t.Errorf("kubectl get configmaps -n %s = %q, want configmap/baseline", hostileNS, out)
	}
	hc.checkUnchanged(t, before)
	if s := a.Stderr.String(); strings.Contains(s, "panic") {
		t.Errorf("admitd's log mentions a panic:\n%s", s)
	}
}

// startHostile starts admitd with mallory's token and applies hostileSetup,
// then waits until her RoleBinding is in force.
func startHostile(t *testing.T) *admitd {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(malloryToken+",mallory,2001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAdmitd(t, filepath.Join(dir, "data"), "--token-auth-file", tokens)
	a.MustKubectl(t, hostileSetup, "apply", "-f", "-")
	c := a.HTTPClient(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, a.URL+cmPath, nil)
		req.Header.Set("Authorization", "Bearer "+malloryToken)
		code, body := do(t, c, req)
		if code == http.StatusOK {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("mallory listing configmaps in %s = %d %s, want 200", hostileNS, code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// wantKind is how an answer is judged.
type wantKind int

const (
	wantCode   wantKind = iota // exactly want.code
	want4xx                    // any 4xx: upstream's exact code is not certain
	wantServed                 // authorized: neither 401 nor 403, and no 5xx
	wantNo5xx                  // anything below 500
)

type want struct {
	kind wantKind
	code int
}

func code(c int) want { return want{kind: wantCode, code: c} }

var (
	any4xx = want{kind: want4xx}
	served = want{kind: wantServed}
	no5xx  = want{kind: wantNo5xx}
)

func (w want) String() string {
	switch w.kind {
	case want4xx:
		return "a 4xx"
	case wantServed:
		return "authorized (not 401/403/5xx)"
	case wantNo5xx:
		return "not a 5xx"
	}
	return strconv.Itoa(w.code)
}

func (w want) accepts(code int) bool {
	switch w.kind {
	case want4xx:
		return code >= 400 && code < 500
	case wantServed:
		return code != http.StatusUnauthorized && code != http.StatusForbidden && code < 500
	case wantNo5xx:
		return code < 500
	}
	return code == w.code
}

// probe is one request of the attack.
type probe struct {
	name        string // how the report calls it; default "METHOD path"
	method      string
	path        string // with its query
	contentType string
	body        []byte
	chunked     bool   // send the body without a Content-Length
	auth        string // the Authorization header
	watch       bool   // a watch: only the response headers are awaited
	want        want
	upstream    string // for uncertain cases: what upstream's code suggests
	// notFoundPage: kube-apiserver answers with its plain-text 404 page,
	// not a Status (a path outside every API group it serves)
	notFoundPage bool
	// emptyNotFound: kube-apiserver answers 404 with an empty body (the
	// OpenAPI v3 handler for a document it does not serve)
	emptyNotFound bool
}

func (p *probe) label() string {
	if p.name != "" {
		return p.name
	}
	path := p.path
	if len(path) > 140 {
		path = path[:120] + fmt.Sprintf("...(%d bytes)", len(p.path))
	}
	who := "mallory"
	if p.auth != "Bearer "+malloryToken {
		who = fmt.Sprintf("auth %.30q", p.auth)
	}
	return fmt.Sprintf("%s %s (%s)", p.method, path, who)
}

// answer is what the server said to a probe.
type answer struct {
	code     int
	status   status
	isStatus bool
	bodyLen  int
	err      error
	took     time.Duration
}

func (a answer) String() string {
	if a.err != nil {
		return fmt.Sprintf("error after %v: %v", a.took.Round(time.Millisecond), a.err)
	}
	if !a.isStatus {
		return strconv.Itoa(a.code)
	}
	msg := a.status.Message
	if len(msg) > 100 {
		msg = msg[:100] + "..."
	}
	return fmt.Sprintf("%d %s %q", a.code, a.status.Reason, msg)
}

// deviation is "" when a matches p.want, else what is wrong.
func (p *probe) deviation(a answer) string {
	switch {
	case a.err != nil:
		return fmt.Sprintf("%s: %v, want %v", p.label(), a, p.want)
	case !p.want.accepts(a.code):
		return fmt.Sprintf("%s = %v, want %v", p.label(), a, p.want)
	case p.notFoundPage && a.code == http.StatusNotFound:
		if a.isStatus {
			return fmt.Sprintf("%s = %v, want the plain-text 404 page", p.label(), a)
		}
	case p.emptyNotFound && a.code == http.StatusNotFound:
		if a.bodyLen != 0 {
			return fmt.Sprintf("%s = %v with a %d-byte body, want an empty 404", p.label(), a, a.bodyLen)
		}
	case a.code >= 400 && p.method != http.MethodHead && (!a.isStatus || a.status.Code != a.code):
		return fmt.Sprintf("%s = %v without a Status body of kind Status and code %d", p.label(), a, a.code)
	case a.code == http.StatusUnauthorized && a.isStatus && a.status.Reason != "Unauthorized",
		a.code == http.StatusForbidden && a.isStatus && a.status.Reason != "Forbidden":
		return fmt.Sprintf("%s = %v, want reason %s", p.label(), a, http.StatusText(a.code))
	}
	return ""
}

type hostileClient struct {
	a     *admitd
	c     *http.Client // no client certificate: the Authorization header is all
	admin *http.Client
}

func newHostileClient(t *testing.T, a *admitd) *hostileClient {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(a.RestConfig(t).CAData)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: hostileWorkers}
	t.Cleanup(tr.CloseIdleConnections)
	return &hostileClient{a: a, c: &http.Client{Transport: tr}, admin: a.HTTPClient(t)}
}

// run sends probes with hostileWorkers at a time and reports every deviation
// in one error; logAll also logs every answer (the uncertain ones are the
// report's).
func (hc *hostileClient) run(t *testing.T, probes []probe, logAll bool) {
	answers := make([]answer, len(probes))
	next := make(chan int)
	var wg sync.WaitGroup
	for range hostileWorkers {
		wg.Go(func() {
			for i := range next {
				answers[i] = hc.send(&probes[i])
			}
		})
	}
	start := time.Now()
	for i := range probes {
		next <- i
	}
	close(next)
	wg.Wait()
	t.Logf("%d requests in %v", len(probes), time.Since(start).Round(time.Millisecond))
	var devs []string
	for i := range probes {
		p, a := &probes[i], answers[i]
		if logAll {
			note := ""
			if p.upstream != "" {
				note = "; upstream: " + p.upstream
			}
			t.Logf("%s -> %v in %v (want %v%s)", p.label(), a, a.took.Round(time.Millisecond), p.want, note)
		}
		if d := p.deviation(a); d != "" {
			devs = append(devs, d)
		}
	}
	if len(devs) > 0 {
		t.Errorf("%d of %d requests deviate:\n%s", len(devs), len(probes), strings.Join(devs, "\n"))
	}
}

func (hc *hostileClient) send(p *probe) answer {
	timeout := 10 * time.Second
	switch {
	case p.watch:
		timeout = 5 * time.Second
	case len(p.body) > 0:
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var body io.Reader
	if p.body != nil {
		body = bytes.NewReader(p.body)
		if p.chunked {
			body = io.MultiReader(body) // hides the length
		}
	}
	req, err := http.NewRequestWithContext(ctx, p.method, hc.a.URL+p.path, body)
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Accept", "application/json")
	if p.contentType != "" {
		req.Header.Set("Content-Type", p.contentType)
	}
	if p.auth != "" {
		req.Header.Set("Authorization", p.auth)
	}
	start := time.Now()
	resp, err := hc.c.Do(req)
	if err != nil {
		return answer{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	a := answer{code: resp.StatusCode}
	if p.watch && resp.StatusCode == http.StatusOK {
		a.took = time.Since(start)
		return a // the stream itself is not read
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	a.took = time.Since(start)
	a.bodyLen = len(data)
	if err != nil {
		a.err = fmt.Errorf("reading the %d answer: %w", resp.StatusCode, err)
		return a
	}
	if resp.StatusCode >= 400 && json.Unmarshal(data, &a.status) == nil && a.status.Kind == "Status" {
		a.isStatus = true
	}
	return a
}

// mallory authenticates a probe as mallory.
func mallory(p probe) probe {
	p.auth = "Bearer " + malloryToken
	return p
}

// hostileState is what the attack must not change: the objects in mine and
// the configmap in other.
type hostileState struct {
	names    []string // configmaps in mine
	baseline string   // uid, resourceVersion and content of baseline
	theirs   string
}

func (hc *hostileClient) snapshot(t *testing.T) hostileState {
	t.Helper()
	var list struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(hc.adminGet(t, cmPath)), &list); err != nil {
		t.Fatalf("listing configmaps in %s: %v", hostileNS, err)
	}
	var s hostileState
	for _, it := range list.Items {
		s.names = append(s.names, it.Metadata.Name)
	}
	s.baseline = hc.adminGet(t, baselinePath)
	s.theirs = hc.adminGet(t, "/api/v1/namespaces/"+hostileOther+"/configmaps/theirs")
	return s
}

func (hc *hostileClient) adminGet(t *testing.T, path string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, hc.a.URL+path, nil)
	code, body := do(t, hc.admin, req)
	if code != http.StatusOK {
		t.Errorf("admin GET %s = %d %s, want 200", path, code, body)
	}
	return body
}

// checkUnchanged compares the state with before: baseline and theirs are the
// same objects at the same resourceVersion, and mine holds no configmap but
// before's and those of the probes upstream might accept (hostile-may-*).
func (hc *hostileClient) checkUnchanged(t *testing.T, before hostileState) {
	t.Helper()
	after := hc.snapshot(t)
	if after.baseline != before.baseline {
		t.Errorf("configmap baseline changed:\nbefore %s\nafter  %s", before.baseline, after.baseline)
	}
	if after.theirs != before.theirs {
		t.Errorf("configmap other/theirs changed:\nbefore %s\nafter  %s", before.theirs, after.theirs)
	}
	known := map[string]bool{}
	for _, n := range before.names {
		known[n] = true
	}
	var extra []string
	for _, n := range after.names {
		if !known[n] && !strings.HasPrefix(n, "hostile-may-") {
			extra = append(extra, n)
		}
	}
	if len(extra) > 0 {
		t.Errorf("configmaps in %s created by requests that should have been refused: %v", hostileNS, extra)
	}
}

// procStatusBytes reads a "kB" field of /proc/<pid>/status.
func procStatusBytes(t *testing.T, pid int, field string) int64 {
	t.Helper()
	n, err := readProcStatus(pid, field)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func readProcStatus(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		return kb << 10, err
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// rssSampler keeps the highest VmRSS seen every 100 ms.
type rssSampler struct {
	peak atomic.Int64
	done chan struct{}
	wg   sync.WaitGroup
}

func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{done: make(chan struct{})}
	s.wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if n, err := readProcStatus(pid, "VmRSS"); err == nil && n > s.peak.Load() {
				s.peak.Store(n)
			}
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	})
	return s
}

func (s *rssSampler) stop() int64 {
	close(s.done)
	s.wg.Wait()
	return s.peak.Load()
}
