// Package samplewebhook is `admitd webhook`: the webhook server of the
// upstream Kubernetes e2e suite (agnhost's `webhook` subcommand), endpoint by
// endpoint, message by message and patch by patch, written on the webhook SDK
// (pkg/webhook). admitd's own end-to-end tests use it as a peer, and
// manifests written for agnhost run against it unchanged.
//
// It reproduces upstream's observable behaviour, quirks included
// (k8s.io/kubernetes/test/images/agnhost/webhook/main.go): a Content-Type other than exactly
// application/json gets an empty 200; a review without a request, a resource
// the endpoint does not handle, and a `wait-forever` pod get no answer at
// all. It is a test fixture, not an example of how to write a webhook:
// pkg/webhook's examples are.
package samplewebhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/pkg/webhook"
	"github.com/admitd/admitd/pkg/yamlbound"
)

// Config configures the endpoints.
type Config struct {
	// SidecarImage is the image /mutating-pods-sidecar injects
	// (--sidecar-image). Default (empty): that endpoint answers 500.
	SidecarImage string
	// Logger receives one line per call at Debug, as upstream logs at -v=2,
	// and the SDK's errors. Default (nil): nothing is logged.
	Logger *slog.Logger
	// delay is /always-allow-delay-5s's sleep: 5s unless a test shortens it.
	delay time.Duration
}

// NewHandler returns the webhook's routes: the twelve admission endpoints
// and /readyz. Any other path is 404.
func NewHandler(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.delay == 0 {
		cfg.delay = 5 * time.Second
	}
	e := &endpoints{cfg: cfg, log: cfg.Logger}
	routes := []struct {
		path    string
		handler webhook.HandlerFunc
	}{
		{"/always-allow-delay-5s", e.alwaysAllowDelay},
		{"/always-deny", e.alwaysDeny},
		{"/add-label", e.addLabel},
		{"/pods", e.pods},
		{"/pods/attach", e.podsAttach},
		{"/mutating-pods", e.mutatingPods},
		{"/mutating-pods-sidecar", e.mutatingPodsSidecar},
		{"/configmaps", e.configmaps},
		{"/mutating-configmaps", e.mutatingConfigmaps},
		{"/custom-resource", e.customResource},
		{"/mutating-custom-resource", e.mutatingCustomResource},
		{"/crd", e.crd},
	}
	mux := http.NewServeMux()
	for _, rt := range routes {
		h := webhook.NewHTTPHandler(rt.handler, webhook.Options{Logger: cfg.Logger, Path: rt.path})
		mux.Handle(rt.path, upstreamEnvelope(rt.path, cfg.delay, h))
	}
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return mux
}

// upstreamEnvelope puts upstream's envelope quirks in front of an SDK
// handler, where the SDK answers differently: a Content-Type that is not
// exactly application/json gets an empty 200 (the SDK: 415), and an
// AdmissionReview without a request gets no answer (the SDK: 400). On the
// v1 path upstream's /always-allow-delay-5s sleeps before it fails, so it
// does here.
func upstreamEnvelope(path string, delay time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" {
			return
		}
		// One byte over the SDK's bound is enough for it to answer 413.
		body, _ := io.ReadAll(io.LimitReader(r.Body, webhook.DefaultMaxRequestBytes+1))
		if version, ok := reviewWithoutRequest(body); ok {
			if version == "admission.k8s.io/v1" && path == "/always-allow-delay-5s" {
				sleep(r.Context(), delay)
			}
			panic(http.ErrAbortHandler)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// reviewWithoutRequest reports whether body is an AdmissionReview of a known
// version whose `request` (case-sensitive) is absent or null, and returns
// that version. Anything it cannot read is left to the SDK to reject.
func reviewWithoutRequest(body []byte) (string, bool) {
	if yamlbound.Check(body) != nil {
		return "", false
	}
	data, err := yaml.YAMLToJSON(body)
	if err != nil {
		return "", false
	}
	var envelope map[string]any
	if err := json.Unmarshal(data, &envelope); err != nil {
		return "", false
	}
	version, _ := envelope["apiVersion"].(string)
	known := version == "admission.k8s.io/v1" || version == "admission.k8s.io/v1beta1"
	return version, known && envelope["kind"] == "AdmissionReview" && envelope["request"] == nil
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
