package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/admitd/admitd/pkg/admission"
)

func TestLogWriterConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	w, err := NewLogWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const writers, perWriter = 8, 50
	big := strings.Repeat("x", 5000) // lines span pages
	done := make(chan struct{})
	readerErr := make(chan error, 1)
	go func() { // a reader never sees a torn line
		defer close(readerErr)
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := readEvents(path); err != nil {
				readerErr <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range perWriter {
				ev := &Event{Kind: KindEvent, APIVersion: APIVersion, Level: LevelMetadata, Stage: StageResponseComplete,
					AuditID: fmt.Sprintf("%d-%d", g, i), UserAgent: big}
				if err := w.WriteEvent(ev); err != nil {
					t.Errorf("WriteEvent() error = %v", err)
				}
			}
		})
	}
	wg.Wait()
	close(done)
	if err := <-readerErr; err != nil {
		t.Fatalf("concurrent reader: %v", err)
	}
	evs, err := readEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ev := range evs {
		seen[ev.AuditID] = true
	}
	if len(evs) != writers*perWriter || len(seen) != writers*perWriter {
		t.Errorf("read %d events (%d distinct), want %d", len(evs), len(seen), writers*perWriter)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("log file mode = %v, want 0600", fi.Mode().Perm())
	}
}

// readEvents parses every complete line of the log.
func readEvents(path string) ([]Event, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var evs []Event
	for len(data) > 0 {
		i := strings.IndexByte(string(data), '\n')
		if i < 0 {
			break // a line being written
		}
		var ev Event
		if err := json.Unmarshal(data[:i], &ev); err != nil {
			return nil, fmt.Errorf("line %d: %w", len(evs), err)
		}
		evs = append(evs, ev)
		data = data[i+1:]
	}
	return evs, nil
}

func TestLogWriterAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "audit.log")
	if _, err := NewLogWriter(path); err != nil { // creates the directories
		t.Fatalf("NewLogWriter() error = %v", err)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("log directory: %v, %v; want mode 0700", fi, err)
	}
	for i := range 2 {
		w, err := NewLogWriter(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteEvent(&Event{AuditID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
		// Visible before Close: nothing is buffered.
		if evs, err := readEvents(path); err != nil || len(evs) != i+1 {
			t.Errorf("after write %d: %d events, %v; want %d", i, len(evs), err, i+1)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteEvent(&Event{}); err == nil {
			t.Errorf("WriteEvent() after Close succeeded")
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestLogWriterErrors(t *testing.T) {
	if err := NewStreamWriter(failingWriter{}).WriteEvent(&Event{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("WriteEvent() error = %v, want disk full", err)
	}
	if _, err := NewLogWriter(filepath.Join(t.TempDir(), "missing-file-as-dir", "\x00")); err == nil {
		t.Errorf("NewLogWriter(bad path) succeeded")
	}
}

// TestAuditorBeforeResponse is the view of a client that reads the log
// after its response (as the conformance harness test/conformance runs
// does): once the
// response has arrived, the ResponseComplete event with the request's
// admission annotations is already in the file.
func TestAuditorBeforeResponse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	lw, err := NewLogWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lw.Close()
	policy, err := ParsePolicy([]byte(header + "rules: [{level: RequestResponse}]"))
	if err != nil {
		t.Fatal(err)
	}
	a := New(Options{Policy: policy, Sink: lw})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := admission.NewRecord()
		_ = rec.AddAnnotation("v.example.com/decision", "ok")
		_ = rec.AddAnnotationWithLevel("patch.webhook.admission.k8s.io/round_0_index_0", "{}", admission.LevelRequest)
		req := &Request{AuditID: r.Header.Get("Audit-ID"), ReceivedAt: time.Now(), RequestURI: r.URL.RequestURI(), Verb: "create",
			User: authenticationv1.UserInfo{Username: "admin"}, SourceIPs: SourceIPs(r), UserAgent: r.UserAgent(), Path: r.URL.Path,
			Resource:       &ObjectReference{Resource: "configmaps", Namespace: "ns", APIVersion: "v1"},
			ResponseStatus: &ResponseStatus{Code: http.StatusCreated}, Admission: rec, FinishedAt: time.Now()}
		if err := a.LogRequest(req); err != nil {
			t.Errorf("LogRequest() error = %v", err)
		}
		w.Header().Set("Audit-Id", req.AuditID)
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()

	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			id := fmt.Sprintf("req-%d", i)
			hr, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/namespaces/ns/configmaps", nil)
			hr.Header.Set("Audit-ID", id)
			hr.Header.Set("X-Forwarded-For", "203.0.113.7")
			resp, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ev, err := findEvent(path, resp.Header.Get("Audit-Id"), StageResponseComplete)
			if err != nil {
				t.Error(err)
				return
			}
			want := map[string]string{"v.example.com/decision": "ok", "patch.webhook.admission.k8s.io/round_0_index_0": "{}"}
			if fmt.Sprint(ev.Annotations) != fmt.Sprint(want) {
				t.Errorf("annotations = %v, want %v", ev.Annotations, want)
			}
			if len(ev.SourceIPs) != 2 || ev.SourceIPs[0] != "203.0.113.7" || ev.SourceIPs[1] != "127.0.0.1" {
				t.Errorf("sourceIPs = %v, want [203.0.113.7 127.0.0.1]", ev.SourceIPs)
			}
		})
	}
	wg.Wait()
}

// findEvent scans the log once, as such a client does.
func findEvent(path, auditID string, stage Stage) (*Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.AuditID == auditID && ev.Stage == stage {
			return &ev, nil
		}
	}
	return nil, fmt.Errorf("no %s event for %s", stage, auditID)
}
