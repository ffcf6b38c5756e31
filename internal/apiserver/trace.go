package apiserver

import (
	"net/http"
	"strings"
)

// TraceHeader asks for a verbose admission trace of a dry run: every
// webhook and policy the server knows is traced with the reason it was
// skipped, not only those its match indexes look at. Its values are
// "true" or "verbose"; admission ignores it on requests that are not dry
// runs (admission.Record.Verbose).
const TraceHeader = "X-Admitd-Trace"

func wantsVerboseTrace(r *http.Request) bool {
	v := r.Header.Get(TraceHeader)
	return v == "true" || v == "verbose"
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
