package apiserver

import (
	"net/http"
	"slices"
	"strings"
)

// TraceHeader asks for a verbose admission trace of a dry run: every
// webhook and policy the server knows is traced with the reason it was
// skipped, not only those its match indexes look at. Its values are
// "true" or "verbose"; it is ignored on requests that are not dry runs.
const TraceHeader = "X-Admitd-Trace"

func wantsVerboseTrace(r *http.Request) bool {
	v := r.Header.Get(TraceHeader)
	if v != "true" && v != "verbose" {
		return false
	}
	return slices.Contains(r.URL.Query()["dryRun"], "All")
}

// extraHandler finds the Config.Extra handler of a path: an exact key, or
// a key ending in "/" that is the path's parent (one level below it).
func (s *Server) extraHandler(path string) (http.Handler, bool) {
	if h, ok := s.cfg.Extra[path]; ok {
		return h, true
	}
	if i := strings.LastIndexByte(path, '/'); i > 0 && i < len(path)-1 {
		h, ok := s.cfg.Extra[path[:i+1]]
		return h, ok
	}
	return nil, false
}
