package server

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptrace"
	"testing"
)

// With --goaway-chance 1 every HTTP/2 answer closes its connection, so a
// client's next request opens a new one; with 0 it reuses it.
func TestGoawayChance(t *testing.T) {
	for _, tc := range []struct {
		chance     float64
		wantReused bool
	}{{0, true}, {1, false}} {
		o := testOptions(t)
		o.Serving.GoawayChance = tc.chance
		s, _ := startWith(t, o)
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(s.CAPEM)
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
		var reused []bool
		for range 3 {
			trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) }}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, s.URL+"/healthz", nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.ProtoMajor != 2 {
				t.Fatalf("protocol %s, want HTTP/2", resp.Proto)
			}
		}
		for i, r := range reused[1:] {
			if r != tc.wantReused {
				t.Errorf("goaway chance %v: request %d reused its connection: %v, want %v", tc.chance, i+2, r, tc.wantReused)
			}
		}
	}
}
