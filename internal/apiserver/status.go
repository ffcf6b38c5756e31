package apiserver

import (
	"errors"
	"fmt"
	"github.com/munnerz/goautoneg"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// statusFor turns any error into the Status a client receives: a StatusError
// keeps its own code and body, anything else becomes a 500 whose message is
// the error text, as upstream's ErrorToAPIStatus does.
func statusFor(err error) *metav1.Status {
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		st := apiStatus.Status()
		if st.Status == "" {
			st.Status = metav1.StatusFailure
		}
		if st.Code == 0 {
			st.Code = http.StatusInternalServerError
		}
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		return &st
	}
	utilruntime.HandleError(err)
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Code:     http.StatusInternalServerError,
		Reason:   metav1.StatusReasonUnknown,
		Message:  err.Error(),
	}
}

func writeError(w http.ResponseWriter, r *http.Request, err error) {
	st := statusFor(err)
	if rq := requestFrom(r.Context()); rq != nil {
		rq.event.Status = st
	}
	setWarnings(w, requestFrom(r.Context()))
	code := int(st.Code)
	media, ok := statusMedia(r)
	switch {
	case !ok:
		writeIndentedJSON(w, code, st)
	case media == mediaProtobuf && writeProtobuf(w, code, st):
	case media == mediaYAML && writeYAML(w, code, st):
	default:
		writeJSON(w, code, st)
	}
}

// statusMedia is the media type a Status is written in for r, as
// upstream's negotiation of errors (which transforms nothing: a clause
// with as, g or v is passed over, and only JSON and protobuf stream);
// ok is false when no clause is acceptable: upstream then writes the
// Status as indented JSON.
func statusMedia(r *http.Request) (media string, ok bool) {
	header := r.Header.Get("Accept")
	switch header {
	case "", mediaJSON:
		return mediaJSON, true
	}
	for _, clause := range goautoneg.ParseAccept(header) {
		if !plainClause(clause.Params) {
			continue
		}
		for _, media := range outputMediaTypes {
			if clauseMatches(clause, media) && (media != mediaYAML || clause.Params["stream"] == "") {
				return media, true
			}
		}
	}
	return "", false
}

// plainClause: an Accept clause's parameters ask for the object itself,
// at most as a watch stream.
func plainClause(params map[string]string) bool {
	for _, transform := range []string{"as", "g", "v"} {
		if _, ok := params[transform]; ok {
			return false
		}
	}
	stream := params["stream"]
	return stream == "" || stream == "watch"
}

// writeNotFoundPage answers a path outside every API group served (not
// /api, not /apis/<group> of a served group) as kube-apiserver's last
// handler does: a plain-text 404 page, not a Status. Clients tell the two
// apart: client-go reports this one as "the server could not find the
// requested resource (get pods.metrics.k8s.io)".
func writeNotFoundPage(w http.ResponseWriter, r *http.Request) {
	if rq := requestFrom(r.Context()); rq != nil {
		rq.event.Status = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound}
	}
	http.NotFound(w, r)
}

// unservedGroup: the group under prefix ("apis") has no version served
// here (aggregated groups were answered before). The legacy group is
// always served.
func (s *Server) unservedGroup(prefix, group string) bool {
	return prefix == "apis" && len(s.cat.Versions(group)) == 0
}

// errNotFoundPath is the 404 for a path that names no resource.
func errNotFoundPath() error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "the server could not find the requested resource", 0, false)
}

// errMethodNotSupported is upstream's 405 for a verb a resource lacks.
func errMethodNotSupported(gr schema.GroupResource, verb string) error {
	return apierrors.NewMethodNotSupported(gr, verb)
}

func errBadRequest(format string, args ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}

// WriteMethodNotAllowed answers, for a handler served beside the API, a
// method its path does not take as kube-apiserver's routes do: the
// generic 405 Status.
func WriteMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, errMethodNotAllowed())
}

// WriteRouteNotFound answers, for a handler served beside the API, a path
// below its own that no route has, as kube-apiserver's routes do: the
// generic 404 Status.
func WriteRouteNotFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, errNotFoundPath())
}

// errMethodNotAllowed is the 405 for a method no route of the path serves.
func errMethodNotAllowed() error {
	return apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, "", schema.GroupResource{}, "", "the server does not allow this method on the requested resource", 0, false)
}
