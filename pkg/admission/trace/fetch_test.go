package trace_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/admission/trace"
)

// Fetch retries the 404 a server gives until it has kept the trace, gives
// up with nil after wait, and returns any other status as a FetchError.
func TestFetch(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case trace.Path + "/late":
			if calls.Add(1) < 3 {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte(`{"kind":"Trace","request":{"auditID":"late"}}`))
		case trace.Path + "/forbidden":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","message":"no"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	tr, err := trace.Fetch(ctx, srv.Client(), srv.URL, "late", time.Second)
	if err != nil || tr == nil || tr.Request.AuditID != "late" || calls.Load() != 3 {
		t.Errorf("Fetch(late) = %+v, %v after %d calls; want the trace at the third", tr, err, calls.Load())
	}
	if tr, err := trace.Fetch(ctx, srv.Client(), srv.URL, "never", 30*time.Millisecond); tr != nil || err != nil {
		t.Errorf("Fetch(never) = %+v, %v; want nil, nil", tr, err)
	}
	var fe *trace.FetchError
	if _, err := trace.Fetch(ctx, srv.Client(), srv.URL, "forbidden", time.Second); !errors.As(err, &fe) || fe.Code != http.StatusForbidden {
		t.Errorf("Fetch(forbidden) error = %v, want a FetchError 403", err)
	}
}
