package webhooks

import (
	"context"
	"math"
	"net/url"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// TestRequestURLMatchesQueryEncoding checks the shortcut for URLs without
// a query against building the query in full.
func TestRequestURLMatchesQueryEncoding(t *testing.T) {
	urls := []string{"https://127.0.0.1:8443/mutate", "https://h", "https://h/", "https://h/a/../b/", "https://user:pw@h:1/p%20q",
		"https://h/p?x=1", "https://h/p?", "https://h/p?timeout=3s&a=b", "https://[::1]:99/x"}
	for _, raw := range urls {
		ep, err := resolveEndpoint(admissionregistrationv1.WebhookClientConfig{URL: &raw})
		if err != nil {
			t.Fatal(err)
		}
		ep.plainURL = plainURLString(ep.url)
		cl := &client{ep: ep}
		for _, timeout := range []time.Duration{0, 500 * time.Millisecond, 10 * time.Second, 90 * time.Second} {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if timeout > 0 {
				ctx, cancel = context.WithTimeout(ctx, timeout)
			}
			got := cl.requestURL(ctx)
			want := fullQueryURL(ep.url, ctx)
			cancel()
			if got != want {
				t.Errorf("%s, timeout %v: got %s, want %s", raw, timeout, got, want)
			}
		}
	}
}

// fullQueryURL parses, sets and re-encodes the query in every case.
func fullQueryURL(base *url.URL, ctx context.Context) string {
	u := *base
	if deadline, ok := ctx.Deadline(); ok {
		secs := int64(math.Ceil(time.Until(deadline).Seconds()))
		if secs < 1 {
			secs = 1
		}
		q := u.Query()
		q.Set("timeout", (time.Duration(secs) * time.Second).String())
		u.RawQuery = q.Encode()
	}
	return u.String()
}
