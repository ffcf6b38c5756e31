package webhooks_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// testCA is a certificate authority made for one test binary, and a serving
// certificate it signed.
type testCA struct {
	pem  []byte // the CA certificate, for caBundle
	cert tls.Certificate
}

// serviceHost is the service every service-form webhook in these tests
// names; the serving certificate is valid for it, for localhost and for
// 127.0.0.1.
const serviceHost = "webhook-test.default.svc"

var (
	caOnce          sync.Once
	mainCA, otherCA *testCA
)

// cas returns the CA that signs the test servers' certificates and an
// unrelated one (for "wrong caBundle" cases).
func cas() (*testCA, *testCA) {
	caOnce.Do(func() {
		mainCA = newTestCA("admitd webhook test CA")
		otherCA = newTestCA("some other CA")
	})
	return mainCA, otherCA
}

func newTestCA(name string) *testCA {
	ca, err := webhooktest.NewCA(name)
	if err != nil {
		panic(err)
	}
	cert, err := ca.Issue(serviceHost, "localhost", "127.0.0.1")
	if err != nil {
		panic(err)
	}
	return &testCA{pem: ca.CertPEM, cert: cert}
}

// reviewIn is what a test webhook decodes from a request body: the same
// fields serve AdmissionReview v1 and v1beta1.
type reviewIn struct {
	APIVersion string                        `json:"apiVersion"`
	Kind       string                        `json:"kind"`
	Request    *admissionv1.AdmissionRequest `json:"request"`
}

// call is one request a test webhook received.
type call struct {
	Path, RawQuery, Proto string
	Header                http.Header
	Body                  []byte
	Review                reviewIn
}

// behaviour is a scripted webhook endpoint.
type behaviour func(w http.ResponseWriter, r *http.Request, in *reviewIn)

// webhookServer is a real HTTPS webhook server on 127.0.0.1 whose
// endpoints (paths) are scripted per test. It records every call.
type webhookServer struct {
	*httptest.Server
	mu     sync.Mutex
	routes map[string]behaviour
	calls  []call
	conns  atomic.Int64 // TCP connections accepted
	// trace, if set, receives the path of each call (shared with in-tree
	// fakes to observe the order of a whole chain).
	trace *trace
}

func newWebhookServer(t testing.TB, http2 bool) *webhookServer {
	t.Helper()
	ca, _ := cas()
	s := &webhookServer{routes: map[string]behaviour{}}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.EnableHTTP2 = http2
	s.TLS = &tls.Config{Certificates: []tls.Certificate{ca.cert}, MinVersion: tls.VersionTLS12}
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // TLS failures are the point of some tests
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// handle scripts path; a later call replaces the behaviour.
func (s *webhookServer) handle(path string, b behaviour) {
	s.mu.Lock()
	s.routes[path] = b
	s.mu.Unlock()
}

// addr is host:port of the server.
func (s *webhookServer) addr() string { return strings.TrimPrefix(s.URL, "https://") }

func (s *webhookServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c := call{Path: r.URL.Path, RawQuery: r.URL.RawQuery, Proto: r.Proto, Header: r.Header.Clone(), Body: body}
	if err := json.Unmarshal(body, &c.Review); err != nil || c.Review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	b := s.routes[r.URL.Path]
	s.mu.Unlock()
	s.trace.add(strings.TrimPrefix(r.URL.Path, "/"))
	if b == nil {
		http.NotFound(w, r)
		return
	}
	b(w, r, &c.Review)
}

// callsTo returns the calls received on path, in arrival order.
func (s *webhookServer) callsTo(path string) []call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []call
	for _, c := range s.calls {
		if c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

// paths returns the paths called, in arrival order.
func (s *webhookServer) paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.calls))
	for i, c := range s.calls {
		out[i] = c.Path
	}
	return out
}

// trace is an ordered log shared by webhooks and in-tree fake plugins.
type trace struct {
	mu      sync.Mutex
	entries []string
}

func (t *trace) add(s string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.entries = append(t.entries, s)
	t.mu.Unlock()
}

func (t *trace) get() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.entries...)
}

// ---- responses

// respond answers in the version of the request, echoing its uid.
func respond(w http.ResponseWriter, in *reviewIn, resp admissionv1.AdmissionResponse) {
	if resp.UID == "" {
		resp.UID = in.Request.UID
	}
	writeJSON(w, http.StatusOK, map[string]any{"apiVersion": in.APIVersion, "kind": "AdmissionReview", "response": resp})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// allowWith allows, with optional audit annotations.
func allowWith(annotations map[string]string) behaviour {
	return func(w http.ResponseWriter, _ *http.Request, in *reviewIn) {
		respond(w, in, admissionv1.AdmissionResponse{Allowed: true, AuditAnnotations: annotations})
	}
}

// allow is upstream's "allow" endpoint: allowed, annotation key1=value1.
var allow = allowWith(map[string]string{"key1": "value1"})

// noop allows without anything else.
var noop = allowWith(nil)

// jsonPatch allows with a JSON patch (and the given audit annotations).
func jsonPatch(patch string, annotations map[string]string) behaviour {
	return func(w http.ResponseWriter, _ *http.Request, in *reviewIn) {
		pt := admissionv1.PatchTypeJSONPatch
		respond(w, in, admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: &pt, AuditAnnotations: annotations})
	}
}

// rawReply answers with a fixed status, content type and body.
func rawReply(code int, contentType, body string) behaviour {
	return func(w http.ResponseWriter, _ *http.Request, _ *reviewIn) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// hijack takes the connection over, writes raw bytes, then closes it; with
// reset the close is an RST (SO_LINGER 0) rather than a TLS close.
func hijack(raw string, reset bool) behaviour {
	return func(w http.ResponseWriter, _ *http.Request, _ *reviewIn) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		if raw != "" {
			_, _ = buf.WriteString(raw)
			_ = buf.Flush()
		}
		if reset {
			if tc, ok := conn.(*tls.Conn); ok {
				if tcp, ok := tc.NetConn().(*net.TCPConn); ok {
					_ = tcp.SetLinger(0)
					_ = tcp.Close()
					return
				}
			}
		}
		_ = conn.Close()
	}
}

// stall waits until the client gives up (or max passes), then allows;
// done is closed once the handler saw the client go away.
func stall(max time.Duration, done chan<- struct{}) behaviour {
	return func(w http.ResponseWriter, r *http.Request, in *reviewIn) {
		select {
		case <-r.Context().Done():
			if done != nil {
				close(done)
			}
			// Abort instead of returning: a handler that returns writes an
			// empty 200, and net/http's client can read it while its TLS
			// close_notify is on the way, turning the deadline into a
			// "0-length response" (seen under -race).
			panic(http.ErrAbortHandler)
		case <-time.After(max):
		}
		respond(w, in, admissionv1.AdmissionResponse{Allowed: true})
	}
}

// drip sends headers and the start of a valid review at once, then one
// byte every interval, until a write fails (the client hung up).
//
// It deliberately ignores the request context: a handler that returns when
// its context ends lets net/http end the chunked body properly, and the
// client then reads a clean (truncated) EOF about half the time instead of
// its deadline error, a race upstream's client has too.
func drip(interval time.Duration, done chan<- struct{}) behaviour {
	return func(w http.ResponseWriter, _ *http.Request, in *reviewIn) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"apiVersion":"`+in.APIVersion+`","kind":"AdmissionReview","response":{"uid":"`+string(in.Request.UID)+`",`)
		w.(http.Flusher).Flush()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			time.Sleep(interval)
			if _, err := io.WriteString(w, " "); err != nil {
				break
			}
			if err := http.NewResponseController(w).Flush(); err != nil {
				break
			}
		}
		if done != nil {
			close(done)
		}
	}
}
