package webhooks_test

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// slowAllow allows after d, a webhook that takes its time.
func slowAllow(d time.Duration) behaviour {
	return func(w http.ResponseWriter, r *http.Request, in *reviewIn) {
		time.Sleep(d)
		allow(w, r, in)
	}
}

// Each webhook call is noted in the request's record for the SLI latency:
// the mutating calls added up, the longest validating call.
func TestWebhookCallsNotedInRecord(t *testing.T) {
	s := newWebhookServer(t, true)
	s.handle("/slow", slowAllow(60*time.Millisecond))
	s.handle("/slower", slowAllow(150*time.Millisecond))
	for _, k := range []kind{mutating, validating} {
		p := newPlugins(t, s.addr())
		p.configure(k, s, wh("slow.example.com", "/slow"), wh("slower.example.com", "/slower"))
		a := cmUpdate(nil)
		if err := p.run(context.Background(), k, a); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		// Lower bounds only: a loaded machine makes calls slower, never faster.
		want := 150 * time.Millisecond
		if k == mutating {
			want = 210 * time.Millisecond
		}
		if got := a.Record.WebhookTime(); got < want {
			t.Errorf("%s: webhook time %v, want at least %v", k, got, want)
		}
	}
}
