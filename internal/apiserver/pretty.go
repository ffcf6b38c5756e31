package apiserver

import (
	"bytes"
	"encoding/json"
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

// prettyWriter holds a whole answer and writes it indented when it is
// JSON (as upstream's pretty JSON serializer: two spaces, no newline at
// the end) from the API (under /api and /apis) or an error (a Status);
// else as it came (the OpenAPI documents, for one). Only for answers
// that are not streams.
type prettyWriter struct {
	w      http.ResponseWriter
	api    bool // the path is under /api or /apis
	code   int
	body   bytes.Buffer
	header bool // WriteHeader was called
}

func (p *prettyWriter) Header() http.Header { return p.w.Header() }

func (p *prettyWriter) WriteHeader(code int) {
	if !p.header {
		p.code, p.header = code, true
	}
}

func (p *prettyWriter) Write(b []byte) (int, error) {
	if !p.header {
		p.WriteHeader(http.StatusOK)
	}
	return p.body.Write(b)
}

// Flush is a no-op: the answer is written when it is whole.
func (p *prettyWriter) Flush() {}

// finish writes the answer held.
func (p *prettyWriter) finish() {
	if !p.header {
		return
	}
	body := p.body.Bytes()
	if (p.api || p.code >= 400) && isJSONMedia(p.w.Header().Get("Content-Type")) && len(body) > 0 {
		var out bytes.Buffer
		if json.Indent(&out, bytes.TrimRight(body, "\n"), "", "  ") == nil {
			body = out.Bytes()
		}
	}
	h := p.w.Header()
	if h.Get("Content-Length") != "" {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	p.w.WriteHeader(p.code)
	_, _ = p.w.Write(body)
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
