package apiserver

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/yamlbound"
)

// Media types a request body may have.
const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// protobufSerializer reads and writes the built-in kinds' protobuf, over
// registry.Scheme (built on first use).
var protobufSerializer = sync.OnceValue(func() *protobuf.Serializer {
	return protobuf.NewSerializer(registry.Scheme(), registry.Scheme())
})

// readBody reads the request body, refusing more than the configured limit
// with upstream's 413; the size of a body read whole is observed in
// apiserver_request_body_size_bytes.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	limit := s.cfg.MaxRequestBodyBytes
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if int64(len(data)) > limit {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	}
	if m := s.cfg.RequestMetrics; m != nil {
		if rq := requestFrom(r.Context()); rq != nil {
			m.recordBodySize(rq.info, len(data))
		}
	}
	return data, nil
}

// mediaTypeOf returns the request's Content-Type without parameters.
func mediaTypeOf(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return mediaJSON
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	return mt
}

func errUnsupportedMediaType(mt string, accepted ...string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s", strings.Join(accepted, ", "))}}
}

// decodeObject decodes a create/update body into an object of the resource's
// kind. Unknown fields are reported in strictErrs (the caller applies
// fieldValidation); a malformed body is a 400.
func decodeObject(res *registry.Resource, mt string, data []byte) (obj runtime.Object, strictErrs []error, err error) {
	gvk := res.GroupVersionKind()
	switch mt {
	case mediaProtobuf:
		if res.Unstructured {
			return nil, nil, errUnsupportedMediaType(mt, mediaJSON, mediaYAML)
		}
		into, _ := registry.Scheme().New(gvk)
		out, _, err := protobufSerializer().Decode(data, &gvk, into)
		if err != nil {
			return nil, nil, undecodable(err.Error(), false)
		}
		return out, nil, checkKind(out, gvk)
	case mediaYAML:
		if err := checkYAML(data); err != nil {
			return nil, nil, err
		}
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, nil, undecodable(err.Error(), false)
		}
		obj, strictErrs, err := decodeJSON(res, j)
		if err != nil {
			return nil, nil, err
		}
		// The conversion keeps the last of a repeated key, as upstream's;
		// its strict decoder reports the repetition first.
		if _, err := yaml.YAMLToJSONStrict(data); err != nil {
			strictErrs = append([]error{err}, strictErrs...)
		}
		return obj, strictErrs, nil
	case mediaJSON:
	default:
		return nil, nil, errUnsupportedMediaType(mt, mediaJSON, mediaYAML, mediaProtobuf)
	}
	return decodeJSON(res, data)
}

// decodeJSON decodes a JSON object of the resource's kind, collecting
// unknown and duplicate fields as strict errors.
func decodeJSON(res *registry.Resource, data []byte) (runtime.Object, []error, error) {
	gvk := res.GroupVersionKind()
	if res.Unstructured {
		return decodeCustomJSON(res, data)
	}
	obj, err := registry.Scheme().New(gvk)
	if err != nil {
		return nil, nil, err
	}
	strict, err := unmarshalStrict(data, obj)
	if err != nil || len(strict) > 0 {
		if err := checkTypeMeta(data, gvk); err != nil {
			return nil, nil, err
		}
	}
	if err != nil {
		return nil, nil, undecodable(err.Error(), true)
	}
	if len(strict) == 0 {
		// Every key matched a field exactly once, so the decoded apiVersion
		// and kind are what checkTypeMeta's case-insensitive look at the
		// body would find: no need to read it again.
		tm, ok := obj.GetObjectKind().(*metav1.TypeMeta)
		if !ok {
			if err := checkTypeMeta(data, gvk); err != nil {
				return nil, nil, err
			}
		} else if err := compareTypeMeta(tm.APIVersion, tm.Kind, gvk); err != nil {
			return nil, nil, err
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, strict, nil
}

// checkTypeMeta compares apiVersion/kind in the body with what the URL
// expects; missing values are filled from the URL, as upstream does.
func checkTypeMeta(data []byte, want schema.GroupVersionKind) error {
	apiVersion, kind, err := readTypeMeta(data)
	if err != nil {
		return err
	}
	return compareTypeMeta(apiVersion, kind, want)
}

// readTypeMeta reads a JSON body's apiVersion and kind, failing as
// upstream's decoder does on a body that is no JSON object.
func readTypeMeta(data []byte) (apiVersion, kind string, err error) {
	var tm struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := json.Unmarshal(data, &tm); err != nil {
		return "", "", undecodable(fmt.Sprintf("couldn't get version/kind; json parse error: %v", err), false)
	}
	return tm.APIVersion, tm.Kind, nil
}

// compareTypeMeta compares a body's apiVersion and kind with what the URL
// expects; missing values are filled from the URL, as upstream does.
func compareTypeMeta(apiVersion, kind string, want schema.GroupVersionKind) error {
	got := schema.FromAPIVersionAndKind(apiVersion, kind)
	if apiVersion == "" {
		got.Group, got.Version = want.Group, want.Version
	}
	if kind == "" {
		got.Kind = want.Kind
	}
	builtin := registry.Scheme().Recognizes(want)
	switch {
	case got == want:
		return nil
	case builtin && !registry.Scheme().Recognizes(got):
		// upstream's decoder knows no such kind: the body is not decoded
		return &undecodableBody{typeKnown: true, kind: got.Kind, version: got.Version,
			StatusError: apierrors.NewBadRequest(fmt.Sprintf("no kind %q is registered for version %q in scheme %q", got.Kind, got.GroupVersion(), upstreamSchemeName))}
	case got.Kind != want.Kind && (builtin || got.GroupVersion() == want.GroupVersion()):
		// upstream decodes the body as its own kind, then fails to
		// convert it to the URL's
		return &undecodableBody{typeKnown: true, kind: got.Kind, version: got.Version,
			StatusError: apierrors.NewBadRequest(fmt.Sprintf("converting (%s.%s) to (%s.%s): unknown conversion", got.Version, got.Kind, internalGroupPackage(want.Group), want.Kind))}
	}
	return typeMetaMismatch(got, want)
}

// upstreamSchemeName is how kube-apiserver's errors name its scheme
// (legacyscheme's, named after the line that made it).
const upstreamSchemeName = "pkg/runtime/scheme.go:111"

// typeMetaMismatch is upstream's error for a body of another group, version
// or kind than the URL's.
func typeMetaMismatch(got, want schema.GroupVersionKind) error {
	return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", got.GroupVersion(), want.GroupVersion()))
}

func checkKind(obj runtime.Object, want schema.GroupVersionKind) error {
	got := obj.GetObjectKind().GroupVersionKind()
	if got.Empty() {
		obj.GetObjectKind().SetGroupVersionKind(want)
		return nil
	}
	if got != want {
		return typeMetaMismatch(got, want)
	}
	return nil
}

// writeObject encodes obj in the media type the client prefers among
// those obj can be written in (objectMedia), JSON when it names none.
func writeObject(w http.ResponseWriter, r *http.Request, code int, obj any) {
	writeObjectWithJSON(w, r, code, obj, nil)
}

// writeObjectWithJSON is writeObject with obj's JSON (as writeJSON would
// write it) already at hand, or nil.
func writeObjectWithJSON(w http.ResponseWriter, r *http.Request, code int, obj any, encoded []byte) {
	setWarnings(w, requestFrom(r.Context()))
	if writeUnlessJSON(w, code, objectMedia(r, hasProtobufForm(obj)), obj) {
		return
	}
	if encoded != nil {
		w.Header().Set("Content-Type", mediaJSON)
		w.WriteHeader(code)
		_, _ = w.Write(encoded)
		return
	}
	writeJSON(w, code, obj)
}

// writeUnlessJSON writes obj in media when that is protobuf or YAML and obj
// can be written in it, and reports whether it did; the caller writes
// JSON otherwise.
func writeUnlessJSON(w http.ResponseWriter, code int, media string, obj any) bool {
	switch media {
	case mediaProtobuf:
		return writeProtobuf(w, code, obj)
	case mediaYAML:
		return writeYAML(w, code, obj)
	}
	return false
}

// writeYAML writes obj in YAML, if it can be.
func writeYAML(w http.ResponseWriter, code int, obj any) bool {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return false
	}
	w.Header().Set("Content-Type", mediaYAML)
	w.WriteHeader(code)
	_, _ = w.Write(data)
	return true
}

// writeIndentedJSON writes obj as JSON indented by two spaces, without a
// newline at the end (upstream's raw JSON answers, as /version).
func writeIndentedJSON(w http.ResponseWriter, code int, obj any) {
	data, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", mediaJSON)
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

func writeJSON(w http.ResponseWriter, code int, obj any) {
	writeJSONAs(w, code, mediaJSON, obj)
}

func writeJSONAs(w http.ResponseWriter, code int, contentType string, obj any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(obj); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// checkYAML refuses, with a 413, a YAML body whose aliases would expand
// its JSON form beyond all proportion (yamlbound).
func checkYAML(data []byte) error {
	if err := yamlbound.Check(data); err != nil {
		return apierrors.NewRequestEntityTooLargeError(err.Error())
	}
	return nil
}

// unmarshalStrict decodes JSON case-sensitively into obj and returns the
// unknown and duplicate fields it met as strict errors. (Naming options
// turns off the ones not named.)
func unmarshalStrict(data []byte, obj any) ([]error, error) {
	return sigsjson.UnmarshalStrict(data, obj, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
}

// undecodableBody is a body that does not decode: a 400 with the
// decoder's message. typeKnown says whether its apiVersion and kind could
// be read, which upstream's create and update handlers word differently
// (writeBodyError).
type undecodableBody struct {
	*apierrors.StatusError
	typeKnown bool
	// kind and version are the body's, when they are not the URL's
	kind, version string
}

func undecodable(msg string, typeKnown bool) error {
	return &undecodableBody{StatusError: apierrors.NewBadRequest(msg), typeKnown: typeKnown}
}

// writeBodyError is how upstream's create and update handlers answer a
// body that does not decode (transformDecodeError): "<Kind> in version
// <v> cannot be handled as a <Kind>" when its type was read, else "the
// object provided is unrecognized" with the start of the body.
func writeBodyError(res *registry.Resource, data []byte, err error) error {
	var ub *undecodableBody
	if !errors.As(err, &ub) {
		return err
	}
	if ub.typeKnown && ub.kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", ub.kind, ub.version, res.Kind, ub.ErrStatus.Message))
	}
	if ub.typeKnown {
		return cannotBeHandled(res, ub.StatusError)
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %s (%s)", res.Kind, ub.ErrStatus.Message, summarizeBody(data, 30)))
}

// summarizeBody is the start of a body as upstream quotes it: JSON as text,
// anything else in hex.
func summarizeBody(data []byte, max int) string {
	switch {
	case len(data) == 0:
		return "<empty>"
	case data[0] == '{':
		if len(data) > max {
			return string(data[:max]) + " ..."
		}
		return string(data)
	case len(data) > max:
		return hex.EncodeToString(data[:max]) + " ..."
	}
	return hex.EncodeToString(data)
}
