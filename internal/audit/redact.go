package audit

import (
	"encoding/json"
)

// redactedToken replaces a bearer token in a logged body.
const redactedToken = "[redacted]"

// credentialField names where a request or response body carries a bearer
// token: TokenReview's spec.token (the token under review) and
// TokenRequest's status.token (the token just minted).
type credentialField struct{ section, field string }

// credentialFieldOf reports the token field of the bodies of ref's
// resource, if they carry one.
func credentialFieldOf(ref *ObjectReference) (credentialField, bool) {
	switch {
	case ref == nil:
		return credentialField{}, false
	case ref.APIGroup == "authentication.k8s.io" && ref.Resource == "tokenreviews":
		return credentialField{"spec", "token"}, true
	case ref.APIGroup == "" && ref.Resource == "serviceaccounts" && ref.Subresource == "token":
		return credentialField{"status", "token"}, true
	}
	return credentialField{}, false
}

// withoutCredentials returns body with the bearer token of ref's resource
// replaced by redactedToken. This is a deliberate difference from
// kube-apiserver, which logs these bodies as they are: an audit log must
// not hand out credentials. Bodies it cannot read are dropped.
func withoutCredentials(ref *ObjectReference, body json.RawMessage) json.RawMessage {
	f, ok := credentialFieldOf(ref)
	if !ok || len(body) == 0 {
		return body
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return nil
	}
	var section map[string]json.RawMessage
	if json.Unmarshal(obj[f.section], &section) != nil || section == nil {
		return body
	}
	if _, has := section[f.field]; !has {
		return body
	}
	section[f.field], _ = json.Marshal(redactedToken)
	obj[f.section], _ = json.Marshal(section)
	out, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return out
}
