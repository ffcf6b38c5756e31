package audit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/admitd/admitd/pkg/admission"
)

func TestTokensAreNotLogged(t *testing.T) {
	const secret = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0.c2ln"
	cases := []struct {
		name      string
		ref       ObjectReference
		req, resp string
		keep      string // a value of the body that must still be logged
	}{
		{"TokenReview", ObjectReference{APIGroup: "authentication.k8s.io", APIVersion: "v1", Resource: "tokenreviews"},
			`{"kind":"TokenReview","spec":{"token":"` + secret + `","audiences":["api"]}}`,
			`{"kind":"TokenReview","spec":{"token":"` + secret + `"},"status":{"authenticated":true}}`, `"audiences":["api"]`},
		{"TokenRequest", ObjectReference{APIVersion: "v1", Resource: "serviceaccounts", Namespace: "ns", Name: "bot", Subresource: "token"},
			`{"kind":"TokenRequest","spec":{"audiences":["api"]}}`,
			`{"kind":"TokenRequest","spec":{"audiences":["api"]},"status":{"token":"` + secret + `","expirationTimestamp":"2030-01-01T00:00:00Z"}}`,
			`"expirationTimestamp":"2030-01-01T00:00:00Z"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := c.ref
			r := &Request{AuditID: "a", Verb: "create", Resource: &ref, Admission: admission.NewRecord(),
				RequestObject: json.RawMessage(c.req), ResponseObject: json.RawMessage(c.resp)}
			ev := NewEvent(r, RequestConfig{Level: LevelRequestResponse}, StageResponseComplete)
			line, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(line), secret) {
				t.Errorf("event = %s, holds the token", line)
			}
			if !strings.Contains(string(line), redactedToken) || !strings.Contains(string(line), c.keep) {
				t.Errorf("event = %s, want the token as %q and the rest (%s) kept", line, redactedToken, c.keep)
			}
		})
	}
}

func TestOtherBodiesLoggedAsTheyAre(t *testing.T) {
	body := `{"kind":"Secret","metadata":{"name":"s"},"stringData":{"token":"kept"}}`
	ref := ObjectReference{APIVersion: "v1", Resource: "secrets", Namespace: "ns", Name: "s"}
	if got := withoutCredentials(&ref, json.RawMessage(body)); string(got) != body {
		t.Errorf("withoutCredentials(secret) = %s, want %s unchanged", got, body)
	}
}
