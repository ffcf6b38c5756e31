package dashboard

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/admission/trace"
	"github.com/admitd/admitd/pkg/lint"
)

// TestStreamOutlivesItsWriteTimeout: an idle stream stays open past the
// write timeout (a deadline left armed over HTTP/2 resets the stream even
// while nothing is written), and delivers the next decision.
func TestStreamOutlivesItsWriteTimeout(t *testing.T) {
	for _, h2 := range []bool{true, false} {
		name := map[bool]string{true: "HTTP/2", false: "HTTP/1.1"}[h2]
		t.Run(name, func(t *testing.T) {
			d := New(Options{WriteTimeout: 100 * time.Millisecond, Heartbeat: time.Hour,
				Configuration: func(context.Context) (*lint.Set, error) { return &lint.Set{}, nil }})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { d.Run(ctx); close(done) }()
			srv := httptest.NewUnstartedServer(d.Handler())
			srv.EnableHTTP2 = h2
			srv.StartTLS()
			t.Cleanup(func() { cancel(); <-done; srv.Close() })

			resp, err := srv.Client().Get(srv.URL + "/dashboard/api/events")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.ProtoMajor != map[bool]int{true: 2, false: 1}[h2] {
				t.Fatalf("protocol %s, want %s", resp.Proto, name)
			}
			lines := make(chan string, 16)
			go func() {
				defer close(lines)
				for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
					lines <- sc.Text()
				}
			}()
			if first := <-lines; first != ": connected" {
				t.Fatalf("first line %q, want the connected comment", first)
			}
			time.Sleep(500 * time.Millisecond) // five write timeouts, idle
			e, rec := traced(trace.NewRing(1), "late", "late")
			d.Observe(e, rec, time.Millisecond)
			for timeout := time.After(5 * time.Second); ; {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatal("the stream ended while idle")
					}
					if strings.HasPrefix(l, "data: ") && strings.Contains(l, `"auditID":"late"`) {
						return
					}
				case <-timeout:
					t.Fatal("no decision within 5s")
				}
			}
		})
	}
}

// TestTooManyStreams: past MaxStreams a client gets 429, not a stream.
func TestTooManyStreams(t *testing.T) {
	d := New(Options{MaxStreams: 1, Configuration: func(context.Context) (*lint.Set, error) { return &lint.Set{}, nil }})
	srv := httptest.NewServer(d.Handler())
	t.Cleanup(srv.Close)
	first, err := http.Get(srv.URL + "/dashboard/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Body.Close()
	second, err := http.Get(srv.URL + "/dashboard/api/events")
	if err != nil {
		t.Fatal(err)
	}
	second.Body.Close()
	if first.StatusCode != http.StatusOK || second.StatusCode != http.StatusTooManyRequests {
		t.Errorf("two streams with MaxStreams 1: %d and %d, want 200 and 429", first.StatusCode, second.StatusCode)
	}
}
