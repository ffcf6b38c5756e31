package apiserver

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// healthCheck is one named check of /healthz, /livez or /readyz.
type healthCheck struct {
	name  string
	check func() error
}

var errShuttingDown = errors.New("process is shutting down")

// healthChecks are the checks of an endpoint ("healthz", "livez" or
// "readyz"): ping always passes; readyz also fails while the server's
// sources are not ready (Config.Ready) and once shutdown has begun.
func (s *Server) healthChecks(endpoint string) []healthCheck {
	checks := []healthCheck{{"ping", func() error { return nil }}, {"log", func() error { return nil }}}
	if endpoint != "readyz" {
		return checks
	}
	return append(checks,
		healthCheck{"informer-sync", func() error {
			if s.cfg.Ready != nil && !s.cfg.Ready() {
				return errors.New("caches not synced")
			}
			return nil
		}},
		healthCheck{"shutdown", func() error {
			if s.shuttingDown.Load() {
				return errShuttingDown
			}
			return nil
		}})
}

// serveHealth answers /healthz, /livez and /readyz as upstream's health
// handlers: "ok", or with ?verbose each check on its line; a failed check
// makes the answer a 500 listing every check (the reason withheld);
// ?exclude=NAME skips a check. /<endpoint>/<check> runs one check.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) bool {
	endpoint, one, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if endpoint != "healthz" && endpoint != "livez" && endpoint != "readyz" {
		return false
	}
	checks := s.healthChecks(endpoint)
	if one != "" {
		for _, c := range checks {
			if c.name == one {
				serveOneCheck(w, c)
				return true
			}
		}
		return false
	}
	excluded := map[string]bool{}
	for _, v := range r.URL.Query()["exclude"] {
		excluded[v] = true
	}
	var out bytes.Buffer
	failed := false
	for _, c := range checks {
		switch {
		case excluded[c.name]:
			delete(excluded, c.name)
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.name)
		case c.check() != nil:
			failed = true
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.name)
		default:
			fmt.Fprintf(&out, "[+]%s ok\n", c.name)
		}
	}
	if len(excluded) > 0 {
		fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", quotedKeys(excluded))
	}
	if failed {
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

func serveOneCheck(w http.ResponseWriter, c healthCheck) {
	if err := c.check(); err != nil {
		http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
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
