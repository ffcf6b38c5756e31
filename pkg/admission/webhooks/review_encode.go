package webhooks

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
)

// reviewEnvelope is the wire form of an AdmissionReview request. Reviews
// are written by encodeReview; encoding/json on this struct is the
// reference it must match byte for byte, and the fallback for the rare
// encodings that fail.
type reviewEnvelope struct {
	Kind       string                        `json:"kind"`
	APIVersion string                        `json:"apiVersion"`
	Request    *admissionv1.AdmissionRequest `json:"request"`
}

// encodeReview writes the AdmissionReview of req, as json.Marshal of its
// reviewEnvelope would, but appending the already encoded object bytes as
// they are instead of re-validating and copying them through reflection.
func encodeReview(apiVersion string, req *admissionv1.AdmissionRequest) ([]byte, error) {
	b, err := appendReview(make([]byte, 0, reviewSizeHint(req)), apiVersion, req)
	if err != nil {
		// let encoding/json word the failure as it always has
		return json.Marshal(reviewEnvelope{Kind: "AdmissionReview", APIVersion: apiVersion, Request: req})
	}
	return b, nil
}

// reviewSizeHint estimates the encoded size, so that one allocation
// usually holds the whole review.
func reviewSizeHint(req *admissionv1.AdmissionRequest) int {
	if req == nil {
		return 64
	}
	n := 640 + len(req.Object.Raw) + len(req.OldObject.Raw) + len(req.Options.Raw)
	if req.Options.Raw == nil && req.Options.Object != nil {
		n += 160 // encoded as the review is written: kind, apiVersion, a field manager
	}
	// the strings the envelope writes (the kinds and resources twice)
	n += len(req.UID) + len(req.Name) + len(req.Namespace) + len(req.Operation) + len(req.SubResource) +
		2*(len(req.Kind.Group)+len(req.Kind.Version)+len(req.Kind.Kind)+len(req.Resource.Group)+len(req.Resource.Resource))
	return n + userInfoSizeHint(&req.UserInfo)
}

// userInfoSizeHint estimates the encoded size of u beyond its field names.
func userInfoSizeHint(u *authenticationv1.UserInfo) int {
	n := len(u.Username) + len(u.UID)
	for _, g := range u.Groups {
		n += len(g) + 3
	}
	for k, vs := range u.Extra {
		n += len(k) + 6
		for _, v := range vs {
			n += len(v) + 3
		}
	}
	return n
}

func appendReview(b []byte, apiVersion string, req *admissionv1.AdmissionRequest) ([]byte, error) {
	b = append(b, `{"kind":"AdmissionReview","apiVersion":`...)
	b = appendJSONString(b, apiVersion)
	b = append(b, `,"request":`...)
	b, err := appendRequest(b, req)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendRequest writes the fields of an AdmissionRequest in declaration
// order, honouring their omitempty tags.
func appendRequest(b []byte, r *admissionv1.AdmissionRequest) ([]byte, error) {
	if r == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"uid":`...)
	b = appendJSONString(b, string(r.UID))
	b = append(b, `,"kind":{"group":`...)
	b = appendJSONString(b, r.Kind.Group)
	b = append(b, `,"version":`...)
	b = appendJSONString(b, r.Kind.Version)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, r.Kind.Kind)
	b = append(b, `},"resource":{"group":`...)
	b = appendJSONString(b, r.Resource.Group)
	b = append(b, `,"version":`...)
	b = appendJSONString(b, r.Resource.Version)
	b = append(b, `,"resource":`...)
	b = appendJSONString(b, r.Resource.Resource)
	b = append(b, '}')
	b = appendOptionalString(b, `,"subResource":`, r.SubResource)
	if k := r.RequestKind; k != nil {
		b = append(b, `,"requestKind":{"group":`...)
		b = appendJSONString(b, k.Group)
		b = append(b, `,"version":`...)
		b = appendJSONString(b, k.Version)
		b = append(b, `,"kind":`...)
		b = appendJSONString(b, k.Kind)
		b = append(b, '}')
	}
	if res := r.RequestResource; res != nil {
		b = append(b, `,"requestResource":{"group":`...)
		b = appendJSONString(b, res.Group)
		b = append(b, `,"version":`...)
		b = appendJSONString(b, res.Version)
		b = append(b, `,"resource":`...)
		b = appendJSONString(b, res.Resource)
		b = append(b, '}')
	}
	b = appendOptionalString(b, `,"requestSubResource":`, r.RequestSubResource)
	b = appendOptionalString(b, `,"name":`, r.Name)
	b = appendOptionalString(b, `,"namespace":`, r.Namespace)
	b = append(b, `,"operation":`...)
	b = appendJSONString(b, string(r.Operation))
	b = append(b, `,"userInfo":`...)
	b, err := appendUserInfo(b, &r.UserInfo)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"object":`...)
	if b, err = appendRawObject(b, r.Object.Raw, r.Object.Object); err != nil {
		return nil, err
	}
	b = append(b, `,"oldObject":`...)
	if b, err = appendRawObject(b, r.OldObject.Raw, r.OldObject.Object); err != nil {
		return nil, err
	}
	if r.DryRun != nil {
		b = append(b, `,"dryRun":`...)
		b = strconv.AppendBool(b, *r.DryRun)
	}
	b = append(b, `,"options":`...)
	if b, err = appendRawObject(b, r.Options.Raw, r.Options.Object); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendUserInfo writes a UserInfo as encoding/json does: its fields in
// declaration order, omitted when empty, the keys of extra sorted.
func appendUserInfo(b []byte, u *authenticationv1.UserInfo) ([]byte, error) {
	start := len(b)
	b = append(b, '{')
	b = appendOptionalField(b, start, `"username":`, u.Username)
	b = appendOptionalField(b, start, `"uid":`, u.UID)
	if len(u.Groups) > 0 {
		if len(b) > start+1 {
			b = append(b, ',')
		}
		b = append(b, `"groups":`...)
		b = appendStrings(b, u.Groups)
	}
	if len(u.Extra) > 0 {
		if len(b) > start+1 {
			b = append(b, ',')
		}
		b = append(b, `"extra":{`...)
		for i, k := range slices.Sorted(maps.Keys(u.Extra)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendStrings(b, u.Extra[k])
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendStrings writes a string slice; nil is null.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendOptionalField writes a non-empty string field of the object that
// starts at start, with a comma unless it is the first field.
func appendOptionalField(b []byte, start int, key, v string) []byte {
	if v == "" {
		return b
	}
	if len(b) > start+1 {
		b = append(b, ',')
	}
	b = append(b, key...)
	return appendJSONString(b, v)
}

// appendOptionalString writes `key` and v unless v is empty; key carries
// its leading comma.
func appendOptionalString(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, key...)
	return appendJSONString(b, v)
}

// appendRawObject writes a RawExtension as its MarshalJSON does. raw is
// always the output of json.Marshal here (compact, HTML-escaped valid
// JSON), which encoding/json would copy unchanged; an object without raw
// bytes is encoded now.
func appendRawObject(b []byte, raw []byte, obj any) ([]byte, error) {
	if raw != nil {
		return append(b, raw...), nil
	}
	if obj == nil {
		return append(b, "null"...), nil
	}
	v, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return append(b, v...), nil
}

// appendJSONString writes s as a JSON string. Printable ASCII that
// encoding/json leaves alone is copied; anything else is quoted by
// encoding/json itself, so that escaping (HTML characters, control
// characters, invalid UTF-8, U+2028/U+2029) stays exactly its own.
func appendJSONString(b []byte, s string) []byte {
	if !plainJSONString(s) {
		q, _ := json.Marshal(s) // a string always encodes
		return append(b, q...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSONString reports whether encoding/json writes s verbatim between
// quotes.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
