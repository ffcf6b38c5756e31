package apiserver

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/internal/flowcontrol"
	"github.com/admitd/admitd/pkg/admission"
)

// RequestEvent describes one finished API request, for the audit log.
type RequestEvent struct {
	AuditID string
	Verb    string
	// Resource request fields, from the URL (Resource empty otherwise).
	APIGroup, APIVersion, Resource, Subresource, Namespace, Name string

	Path       string
	RequestURI string
	Method     string
	// User is who authenticated; Impersonated whom they act as, if anyone.
	User         authenticationv1.UserInfo
	Impersonated *authenticationv1.UserInfo
	// HTTPRequest is the request as received (headers, remote address).
	HTTPRequest *http.Request
	UserAgent   string
	Code        int
	// Status is the Status written for a failed request.
	Status         *metav1.Status
	Started        time.Time
	Finished       time.Time
	Record         *admission.Record
	RequestObject  runtime.Object
	ResponseObject runtime.Object
}

type ctxKey int

const requestKey ctxKey = 0

// request is the per-request state carried through a handler.
type request struct {
	info   *requestInfo
	user   authenticationv1.UserInfo
	record *admission.Record
	event  *RequestEvent
	// apply marks a server-side apply: its merge records managedFields
	// and it may create the object.
	apply bool
	// uidPrecondition is the uid a PUT's body (an object, a Scale) names:
	// the update goes ahead only while the stored object has it.
	uidPrecondition types.UID
	// scaleUID is the uid of the Scale a scale write asks for (its PUT
	// body's, or the patched Scale's): mutating admission sees it, and
	// the admitted Scale's is checked against the object's.
	scaleUID *types.UID
	// flow holds the request's flow-control seats (digest is what it was
	// classified by); inflightRelease the in-flight slot when APF is off.
	// releaseFlow gives them back.
	flow            flowcontrol.Admission
	digest          flowcontrol.Digest
	inflightRelease func()
	// forgetWatch stops counting a watch (for the estimate of writes'
	// work) when it ends.
	forgetWatch func()
	// metered marks a request upstream counts in its per-request series:
	// one that reached a served resource or health endpoint, or that flow
	// control refused (dropped).
	metered, dropped bool
	// executing is where the request is counted while it executes under
	// flow control (apiserver_current_inflight_requests), nil when it is
	// not; readOnly is its kind there.
	executing *requestMarks
	readOnly  bool
	// eventData and recorder are what event and the response writer
	// point to, kept here to allocate one struct per request, not three.
	eventData RequestEvent
	recorder  statusRecorder
}

func requestFrom(ctx context.Context) *request {
	rq, _ := ctx.Value(requestKey).(*request)
	return rq
}

// statusRecorder remembers the response code for the audit event and
// counts the bytes of the body for apiserver_response_sizes.
type statusRecorder struct {
	http.ResponseWriter
	code    int
	written int64
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	n, err := s.ResponseWriter.Write(p)
	s.written += int64(n)
	return n, err
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (write
// deadlines of the dashboard's event stream).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// noCachePrivate is the Cache-Control of every answer whose handler sets
// none. Shared: a header's values are replaced or appended to (len ==
// cap), never changed in place.
var noCachePrivate = []string{"no-cache, private"}

// ServeHTTP serves one request within its deadline: a request that is not
// long-running has RequestTimeout (or the shorter `timeout` it asks for)
// and is answered 504 when it runs out, as upstream's timeout filter. A
// malformed `timeout` is a 400 before anything else, as upstream's.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// every answer is for an authenticated client only: not to be cached
	// (upstream's WithCacheControl); a handler may say otherwise
	if h := w.Header(); h["Cache-Control"] == nil {
		h["Cache-Control"] = noCachePrivate
	}
	if s.cfg.GoawayChance > 0 && r.ProtoMajor == 2 && rand.Float64() < s.cfg.GoawayChance {
		w.Header().Set("Connection", "close") // net/http sends a GOAWAY
	}
	info := parseRequestInfo(r)
	if s.isLongRunning(info) {
		s.serveStream(w, r, info)
		return
	}
	if wantsPretty(r) {
		pw := &prettyWriter{w: w, api: isAPIPath(r.URL.Path)}
		defer pw.finish()
		w = pw
	}
	timeout, err := s.requestTimeout(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.serveWithDeadline(w, r, timeout, info)
}

// keepRequestObject copies the decoded body into the request's event when
// the audit log may record it.
func (s *Server) keepRequestObject(rq *request, obj runtime.Object) {
	if s.cfg.KeepRequestObjects {
		rq.event.RequestObject = obj.DeepCopyObject()
	}
}

// serveRequest authenticates, authorizes, routes and serves one request
// in ctx (r's context or one derived from it: r is copied once, with ctx
// and the request's state).
func (s *Server) serveRequest(ctx context.Context, w http.ResponseWriter, r *http.Request, info *requestInfo) {
	if r.Method != http.MethodGet {
		growStack()
	}
	auditID := r.Header.Get("Audit-Id") // canonical: Get need not allocate a canonical form of "Audit-ID"
	if auditID == "" {
		auditID = uuid.NewString()
	}
	w.Header().Set("Audit-Id", auditID)
	rq := &request{info: info, record: admission.NewRecord()}
	if wantsVerboseTrace(r) {
		rq.record.SetVerbose(true)
	}
	rq.eventData = RequestEvent{AuditID: auditID, Verb: info.kubeVerb(r), Path: r.URL.Path, RequestURI: r.URL.RequestURI(), Method: r.Method,
		HTTPRequest: r, UserAgent: r.UserAgent(), Started: s.cfg.Now(), Record: rq.record}
	rq.event = &rq.eventData
	rq.recorder = statusRecorder{ResponseWriter: w}
	rec := &rq.recorder
	ctx = context.WithValue(ctx, requestKey, rq)
	r = r.WithContext(ctx)
	defer s.finish(ctx, rq, rec)

	if u, ok := s.authenticateLoopback(r.Context()); ok {
		rq.user, rq.event.User = u, u
	} else if s.cfg.Authenticate != nil {
		u, requester, err := s.cfg.Authenticate(r)
		if err != nil {
			writeError(rec, r, err)
			return
		}
		rq.user, rq.event.User = u, u
		if requester != nil {
			rq.event.User, rq.event.Impersonated = *requester, &u
		}
	} else {
		rq.user = authenticationv1.UserInfo{Username: "system:anonymous", Groups: []string{"system:unauthenticated"}}
		rq.event.User = rq.user
	}
	if info.IsResource {
		ev := rq.event
		ev.APIGroup, ev.APIVersion, ev.Resource, ev.Subresource, ev.Namespace, ev.Name = info.Group, info.Version, info.Resource, info.Subresource, info.Namespace, info.objectName()
	}
	if !s.enterFlowControl(rec, r, rq) {
		rq.metered, rq.dropped = true, true
		if m := s.cfg.RequestMetrics; m != nil {
			m.terminate(r, info, http.StatusTooManyRequests)
		}
		return
	}
	defer rq.leaveFlowControl()
	if !s.authorize(rec, r, rq) {
		return
	}
	if s.servePublic(rec, r) {
		return
	}
	s.route(rec, r, rq)
}

func (s *Server) finish(ctx context.Context, rq *request, rec *statusRecorder) {
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	rq.event.Code = rec.code
	rq.event.Finished = s.cfg.Now()
	s.recordRequestMetrics(rq, rec)
	if s.cfg.OnRequestDone != nil {
		s.cfg.OnRequestDone(ctx, rq.event)
	}
}

// servePublic answers the health and version endpoints. They are
// authenticated and authorized as every other path (RBAC's
// system:public-info-viewer lets everyone get them); a server without
// anonymous access still lets requests without credentials in on the
// health paths (HealthPaths).
func (s *Server) servePublic(w http.ResponseWriter, r *http.Request) bool {
	if s.serveHealth(w, r) {
		if rq := requestFrom(r.Context()); rq != nil {
			rq.metered = slices.Contains(HealthPaths, r.URL.Path)
		}
		return true
	}
	switch r.URL.Path {
	case "/version", "/version/":
		if r.Method != http.MethodGet {
			writeError(w, r, errMethodNotAllowed())
			return true
		}
		writeIndentedJSON(w, http.StatusOK, versionInfo())
		return true
	}
	if strings.HasPrefix(r.URL.Path, "/version/") {
		writeError(w, r, errNotFoundPath()) // no route below /version
		return true
	}
	return false
}

// HealthPaths are the health endpoints: what a server without anonymous
// access still serves to requests without credentials, as kube-apiserver's
// recommended AuthenticationConfiguration (anonymous with these path
// conditions).
var HealthPaths = []string{"/healthz", "/livez", "/readyz"}

func (s *Server) route(w http.ResponseWriter, r *http.Request, rq *request) {
	if h, ok := s.extraHandler(r.URL.Path); ok {
		h.ServeHTTP(w, r)
		return
	}
	p := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case p == "/api" && r.Method != http.MethodGet:
		// kube-apiserver's /api and group versions route GET only; /apis
		// and /apis/<group> take every method
		writeError(w, r, errMethodNotAllowed())
		return
	case p == "/api" || p == "/apis":
		s.serveDiscoveryRoot(w, r, p)
		return
	case strings.HasPrefix(p, "/apis/") && strings.Count(p, "/") == 2:
		s.serveAPIGroup(w, r, strings.TrimPrefix(p, "/apis/"))
		return
	case r.URL.Path == "/openapi/v3" || strings.HasPrefix(r.URL.Path, "/openapi/v3/"):
		s.serveOpenAPIV3(w, r)
		return
	case r.URL.Path == "/openapi/v2":
		s.serveOpenAPIV2(w, r)
		return
	}
	if s.serveAggregated(w, r, rq) {
		return
	}
	info := rq.info
	if info.APIPrefix == "" || s.unservedGroup(info.APIPrefix, info.Group) {
		writeNotFoundPage(w, r)
		return
	}
	if !info.IsResource {
		s.serveGroupVersion(w, r, info)
		return
	}
	s.serveResource(w, r, rq)
}
