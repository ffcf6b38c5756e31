package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// HealthCheck is a named check of /healthz, /livez or /readyz: nil from
// Check passes.
type HealthCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

var errShuttingDown = errors.New("process is shutting down")

// healthChecks are the checks of an endpoint ("healthz", "livez" or
// "readyz") in kube-apiserver's order: ping and log always pass; the
// storage check ("etcd", whatever the backend, as upstream names it);
// readyz adds storage readiness ("etcd-readiness") and informer-sync (the
// sources are synced, Config.Ready); then Config.StartChecks; readyz ends
// with shutdown, which fails once shutdown has begun.
func (s *Server) healthChecks(endpoint string) []HealthCheck {
	pass := func(context.Context) error { return nil }
	readyz := endpoint == "readyz"
	checks := []HealthCheck{{"ping", pass}, {"log", pass}, {"etcd", orPass(s.cfg.StorageHealth)}}
	if readyz {
		checks = append(checks, HealthCheck{"etcd-readiness", orPass(s.cfg.StorageReadiness)},
			HealthCheck{"informer-sync", func(context.Context) error {
				if s.cfg.Ready != nil && !s.cfg.Ready() {
					return errors.New("caches not synced")
				}
				return nil
			}})
	}
	checks = append(checks, s.cfg.StartChecks...)
	if readyz {
		checks = append(checks, HealthCheck{"shutdown", func(context.Context) error {
			if s.shuttingDown.Load() {
				return errShuttingDown
			}
			return nil
		}})
	}
	return checks
}

func orPass(check func(context.Context) error) func(context.Context) error {
	if check == nil {
		return func(context.Context) error { return nil }
	}
	return check
}

// serveHealth answers /healthz, /livez and /readyz as upstream's health
// handlers: "ok", or with ?verbose each check on its line; a failed check
// makes the answer a 500 listing every check (the reason withheld, and
// logged); ?exclude=NAME skips a check. /<endpoint>/<check> runs one
// check; a check not there is a plain 404.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) bool {
	endpoint, one, nested := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if endpoint != "healthz" && endpoint != "livez" && endpoint != "readyz" {
		return false
	}
	checks := s.healthChecks(endpoint)
	if nested {
		i := slices.IndexFunc(checks, func(c HealthCheck) bool { return c.Name == one })
		if i < 0 {
			http.NotFound(w, r)
			return true
		}
		serveOneCheck(w, r, checks[i])
		return true
	}
	excluded := map[string]bool{}
	for _, v := range r.URL.Query()["exclude"] {
		excluded[v] = true
	}
	var out bytes.Buffer
	var failures []any
	for _, c := range checks {
		if excluded[c.Name] {
			delete(excluded, c.Name)
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.Name)
			continue
		}
		if err := c.Check(r.Context()); err != nil {
			failures = append(failures, c.Name, err.Error())
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.Name)
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", c.Name)
	}
	if len(excluded) > 0 {
		fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", quotedKeys(excluded))
	}
	if len(failures) > 0 {
		s.log.Info(endpoint+" check failed", failures...)
		http.Error(w, fmt.Sprintf("%s%s check failed", out.String(), endpoint), http.StatusInternalServerError)
		return true
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if _, verbose := r.URL.Query()["verbose"]; !verbose {
		_, _ = w.Write([]byte("ok"))
		return true
	}
	_, _ = out.WriteTo(w)
	fmt.Fprintf(w, "%s check passed\n", endpoint)
	return true
}

// serveOneCheck answers one check's path: "ok", or a 500 with the
// reason.
func serveOneCheck(w http.ResponseWriter, r *http.Request, c HealthCheck) {
	if err := c.Check(r.Context()); err != nil {
		http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok"))
}

// quotedKeys lists the keys of m quoted, sorted, comma-separated.
func quotedKeys(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, fmt.Sprintf("%q", k))
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}
