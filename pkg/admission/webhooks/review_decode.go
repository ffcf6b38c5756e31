package webhooks

import (
	"encoding/base64"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/types"
)

// decodePlainV1Review decodes the answer most webhooks give: a v1
// AdmissionReview whose response holds only uid, allowed, and optionally
// patchType and patch, every string free of escapes, no key repeated. It
// yields exactly what the general JSON decoder would; ok is false for any
// other body, which is then left to that decoder.
func decodePlainV1Review(body []byte) (review *admissionv1.AdmissionReview, ok bool) {
	s := plainScanner{buf: body}
	review = &admissionv1.AdmissionReview{}
	var seen [3]bool
	ok = s.object(func(key string) bool {
		switch key {
		case "apiVersion":
			return once(&seen[0]) && s.stringInto(&review.APIVersion)
		case "kind":
			return once(&seen[1]) && s.stringInto(&review.Kind)
		case "response":
			if !once(&seen[2]) {
				return false
			}
			review.Response = &admissionv1.AdmissionResponse{}
			return s.plainResponse(review.Response)
		}
		return false
	})
	if !ok || !seen[2] || !s.atEnd() {
		return nil, false
	}
	return review, true
}

// plainResponse decodes the response object of a plain review.
func (s *plainScanner) plainResponse(r *admissionv1.AdmissionResponse) bool {
	var seen [4]bool
	return s.object(func(key string) bool {
		switch key {
		case "uid":
			var uid string
			ok := once(&seen[0]) && s.stringInto(&uid)
			r.UID = types.UID(uid)
			return ok
		case "allowed":
			return once(&seen[1]) && s.boolInto(&r.Allowed)
		case "patchType":
			var pt string
			if !once(&seen[2]) || !s.stringInto(&pt) {
				return false
			}
			r.PatchType = (*admissionv1.PatchType)(&pt)
			return true
		case "patch":
			var enc string
			if !once(&seen[3]) || !s.stringInto(&enc) || enc == "" {
				return false
			}
			patch, err := base64.StdEncoding.DecodeString(enc)
			r.Patch = patch
			return err == nil
		}
		return false
	})
}

// once marks a key as seen and reports whether it was new.
func once(seen *bool) bool {
	if *seen {
		return false
	}
	*seen = true
	return true
}

// plainScanner reads the restricted JSON of plain reviews.
type plainScanner struct {
	buf []byte
	pos int
}

func (s *plainScanner) skipSpace() {
	for s.pos < len(s.buf) {
		switch s.buf[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// consume skips white space and then c, reporting whether c was there.
func (s *plainScanner) consume(c byte) bool {
	s.skipSpace()
	if s.pos < len(s.buf) && s.buf[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// object reads a non-empty object, calling member after each key and its
// colon to read the value.
func (s *plainScanner) object(member func(key string) bool) bool {
	if !s.consume('{') {
		return false
	}
	for {
		var key string
		if !s.stringInto(&key) || !s.consume(':') || !member(key) {
			return false
		}
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// stringInto reads a string of printable ASCII without escapes.
func (s *plainScanner) stringInto(out *string) bool {
	if !s.consume('"') {
		return false
	}
	start := s.pos
	for s.pos < len(s.buf) {
		c := s.buf[s.pos]
		switch {
		case c == '"':
			*out = string(s.buf[start:s.pos])
			s.pos++
			return true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return false
		}
		s.pos++
	}
	return false
}

func (s *plainScanner) boolInto(out *bool) bool {
	s.skipSpace()
	rest := s.buf[s.pos:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		*out, s.pos = true, s.pos+4
	case len(rest) >= 5 && string(rest[:5]) == "false":
		*out, s.pos = false, s.pos+5
	default:
		return false
	}
	return true
}

// atEnd reports whether only white space is left.
func (s *plainScanner) atEnd() bool {
	s.skipSpace()
	return s.pos == len(s.buf)
}
