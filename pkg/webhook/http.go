package webhook

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultMaxRequestBytes is the default bound on a review's size: 7 MiB, as
// in controller-runtime. kube-apiserver accepts request bodies of up to
// 3 MiB, and a review of an UPDATE carries two objects (object and
// oldObject), both re-encoded as JSON, so a 3 MiB bound would reject reviews
// of objects the API server stores.
const DefaultMaxRequestBytes = 7 << 20

// Options configure the handler NewHTTPHandler returns. The zero value is
// ready to use.
type Options struct {
	// MaxRequestBytes bounds the request body; a larger one is answered 413.
	// Default (0): DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// Registerer receives the handler's metrics (admitd_webhook_requests_total,
	// admitd_webhook_request_duration_seconds,
	// admitd_webhook_requests_in_flight). Handlers may share one. Default
	// (nil): no metrics.
	Registerer prometheus.Registerer
	// Logger receives panics (Error) and answers (Debug). Default (nil):
	// nothing is logged.
	Logger *slog.Logger
	// Path is the metrics' path label. Default: the pattern of the ServeMux
	// that routed the request (empty when none did).
	Path string
}

// Serve returns h as an http.Handler with the default Options.
func Serve(h Handler) http.Handler {
	return NewHTTPHandler(h, Options{})
}

// NewHTTPHandler returns an http.Handler that answers AdmissionReviews with
// h. It accepts admission.k8s.io/v1 and v1beta1 reviews with Content-Type
// application/json (YAML and protobuf bodies are recognized too) and answers
// 200 with a review of the same version whose uid is the request's. Before
// h runs it answers 415 to another content type, 413 to a body over
// MaxRequestBytes, and 400 (text/plain, `Request could not be decoded: …`
// or `Unsupported group version kind: …`, as upstream's test webhook) to
// anything else that is not a review with a request. A panic in h is
// answered 500 with a review that does not allow the request;
// panic(http.ErrAbortHandler) aborts the request without an answer.
//
// It panics if opts.Registerer already holds a different metric of the
// same name.
func NewHTTPHandler(h Handler, opts Options) http.Handler {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &httpHandler{handler: h, opts: opts, metrics: newMetrics(opts.Registerer)}
}

type httpHandler struct {
	handler Handler
	opts    Options
	metrics *metrics
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := h.opts.Path
	if path == "" {
		path = r.Pattern
	}
	result := resultAborted
	done := h.metrics.begin(path)
	defer func() { done(result) }()
	result = h.serve(w, r)
}

// serve answers one request and returns its result for the metrics.
func (h *httpHandler) serve(w http.ResponseWriter, r *http.Request) string {
	body, rerr := h.readBody(w, r)
	if rerr != nil {
		h.opts.Logger.Debug("review rejected", "path", r.URL.Path, "code", rerr.code, "error", rerr.msg)
		http.Error(w, rerr.msg, rerr.code)
		return resultInvalid
	}
	req, version, err := decodeReview(body)
	if err != nil {
		var re *requestError
		errors.As(err, &re)
		h.opts.Logger.Debug("review rejected", "path", r.URL.Path, "code", re.code, "error", re.msg)
		http.Error(w, re.msg, re.code)
		return resultInvalid
	}
	resp, panicked := h.call(r, req)
	resp.UID = req.UID
	data, err := encodeReview(version, &resp.AdmissionResponse)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return resultError
	}
	code, result := http.StatusOK, resultOf(&resp)
	if panicked {
		code, result = http.StatusInternalServerError, resultPanic
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(data)
	h.opts.Logger.Debug("review answered", "path", r.URL.Path, "uid", req.UID, "kind", req.Kind.Kind,
		"namespace", req.Namespace, "name", req.Name, "operation", req.Operation, "result", result)
	return result
}

// readBody checks the content type and reads the body within the size bound.
func (h *httpHandler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *requestError) {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return nil, &requestError{http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q is not application/json", ct)}
	}
	tooLarge := &requestError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", h.opts.MaxRequestBytes)}
	if r.ContentLength > h.opts.MaxRequestBytes {
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxRequestBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, tooLarge
		}
		return nil, &requestError{http.StatusBadRequest, "reading the request body: " + err.Error()}
	}
	return body, nil
}

// call runs the Handler, turning a panic into an Errored answer; an
// http.ErrAbortHandler panic is passed on so that net/http aborts.
func (h *httpHandler) call(r *http.Request, req Request) (resp Response, panicked bool) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		h.opts.Logger.Error("webhook handler panicked", "path", r.URL.Path, "uid", req.UID,
			"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		resp, panicked = Errored(http.StatusInternalServerError, fmt.Errorf("webhook handler panicked: %v", v)), true
	}()
	return h.handler.Handle(r.Context(), req), false
}
