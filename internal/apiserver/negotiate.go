package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/munnerz/goautoneg"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/registry"
)

// Output negotiation as kube-apiserver does it for reads and write
// responses: the Accept clauses are tried in order of preference against
// the media types the server encodes (JSON, YAML, protobuf, in that
// order); a clause may ask, with as=, g= and v=, for the response turned
// into a meta.k8s.io kind (Table, PartialObjectMetadata or
// PartialObjectMetadataList). The first clause the endpoint can serve wins;
// when none can, the request is refused with 406 before anything is read.

// Kinds a client may ask a response to be turned into.
const (
	asTable       = "Table"
	asPartial     = "PartialObjectMetadata"
	asPartialList = "PartialObjectMetadataList"
)

// outputMediaTypes are the media types responses are encoded in, in the
// order upstream's serializer lists them.
var outputMediaTypes = []string{mediaJSON, mediaYAML, mediaProtobuf}

// negotiated is the outcome of negotiating one request's Accept header.
type negotiated struct {
	media   string // mediaJSON, mediaYAML or mediaProtobuf
	as      string // "" (the object itself), asTable, asPartial or asPartialList
	version string // meta.k8s.io version of as: v1 or v1beta1
}

// metaAPIVersion is the apiVersion of the kind n.as names.
func (n negotiated) metaAPIVersion() string { return metav1.GroupName + "/" + n.version }

// negotiateOutput picks the media type and conversion for the response to
// r on res's endpoint, or returns upstream's 406.
func negotiateOutput(r *http.Request, res *registry.Resource) (negotiated, error) {
	header := r.Header.Get("Accept")
	if header == "" {
		return negotiated{media: mediaJSON}, nil
	}
	for _, clause := range goautoneg.ParseAccept(header) {
		for _, media := range outputMediaTypes {
			if !clauseMatches(clause, media) {
				continue
			}
			if n, ok := acceptClause(clause.Params, media, res); ok {
				return n, nil
			}
		}
	}
	return negotiated{}, errNotAcceptableMedia()
}

// clauseMatches reports whether an Accept clause covers media, exactly or
// by a wildcard.
func clauseMatches(clause goautoneg.Accept, media string) bool {
	typ, sub, _ := strings.Cut(media, "/")
	switch {
	case clause.Type == typ && clause.SubType == sub, clause.Type == typ && clause.SubType == "*":
		return true
	default:
		return clause.Type == "*" && clause.SubType == "*"
	}
}

// acceptClause reads a clause's parameters for media and reports whether
// the endpoint serves what they ask for.
func acceptClause(params map[string]string, media string, res *registry.Resource) (negotiated, bool) {
	n := negotiated{media: media}
	var group string
	converts := false
	for k, v := range params {
		switch k {
		case "as":
			n.as, converts = v, true
		case "g":
			group, converts = v, true
		case "v":
			n.version, converts = v, true
		case "stream":
			if v != "" && (v != "watch" || media == mediaYAML) {
				return negotiated{}, false
			}
		case "sv":
			if v != "" {
				return negotiated{}, false
			}
		}
	}
	if !converts {
		// Custom resources have no protobuf form of their own.
		return n, !(res.Unstructured && media == mediaProtobuf)
	}
	if group != metav1.GroupName || (n.version != "v1" && n.version != "v1beta1") {
		return negotiated{}, false
	}
	switch n.as {
	case asTable:
		return n, media == mediaJSON || media == mediaYAML
	case asPartial, asPartialList:
		return n, true
	}
	return negotiated{}, false
}

// errNotAcceptableMedia is upstream's 406 when no Accept clause can be served.
func errNotAcceptableMedia() error {
	return errNotAcceptable(fmt.Sprintf("only the following media types are accepted: %s", strings.Join(outputMediaTypes, ", ")))
}

// errNotAcceptable is a 406 NotAcceptable Status with message.
func errNotAcceptable(message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: message,
	}}
}
