package apiserver

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// wantsPretty is upstream's deprecated pretty printing: ?pretty=<bool>
// when given, else a user agent of a browser or a command-line HTTP tool.
func wantsPretty(r *http.Request) bool {
	if strings.Contains(r.URL.RawQuery, "pretty") {
		if v := r.URL.Query().Get("pretty"); v != "" {
			pretty, _ := strconv.ParseBool(v)
			return pretty
		}
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}

// prettyWriter lays out an answer indented as it is written when it is
// JSON (as upstream's pretty JSON serializer: two spaces, no newline at
// the end) from the API (under /api and /apis) or an error (a Status);
// else it passes the answer through as it comes (the OpenAPI documents,
// for one). Only for answers that are not streams.
//
// It decides at WriteHeader (or the first Write or Flush), from the
// status code and the Content-Type then set, and streams: a list is
// indented page by page as it is written, never held whole. There is no
// falling back to the answer as it came when it is not valid JSON, as
// there was when the whole answer was held: see jsonIndenter.
type prettyWriter struct {
	w      http.ResponseWriter
	api    bool // the path is under /api or /apis
	header bool // WriteHeader was called
	// indent lays out the answer, when it is to be indented; nil when
	// it passes through.
	indent *jsonIndenter
}

func (p *prettyWriter) Header() http.Header { return p.w.Header() }

func (p *prettyWriter) WriteHeader(code int) {
	if p.header {
		return
	}
	p.header = true
	h := p.w.Header()
	if (p.api || code >= 400) && isJSONMedia(h.Get("Content-Type")) {
		h.Del("Content-Length") // the length of the compact answer
		p.indent = newJSONIndenter(p.w)
	}
	p.w.WriteHeader(code)
}

func (p *prettyWriter) Write(b []byte) (int, error) {
	if !p.header {
		p.WriteHeader(http.StatusOK)
	}
	if p.indent == nil {
		return p.w.Write(b)
	}
	return p.indent.Write(b)
}

// Flush writes on what was laid out so far and flushes the connection.
// As net/http's, a Flush before anything else answers 200.
func (p *prettyWriter) Flush() {
	if !p.header {
		p.WriteHeader(http.StatusOK)
	}
	if p.indent != nil {
		_ = p.indent.Flush()
	}
	if f, ok := p.w.(http.Flusher); ok {
		f.Flush()
	}
}

// finish writes on the rest of an indented answer; an answer never begun
// is left alone.
func (p *prettyWriter) finish() {
	if p.indent != nil {
		_ = p.indent.Flush()
	}
}

// isAPIPath: path is /api, /apis or under them.
func isAPIPath(path string) bool {
	rest, ok := strings.CutPrefix(path, "/api")
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, "s")
	return rest == "" || rest[0] == '/'
}

func isJSONMedia(contentType string) bool {
	media, _, err := mime.ParseMediaType(contentType)
	return err == nil && media == "application/json"
}
