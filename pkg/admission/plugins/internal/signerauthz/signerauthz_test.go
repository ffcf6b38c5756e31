package signerauthz

import (
	"context"
	"errors"
	"reflect"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/admitd/admitd/pkg/admission"
)

func TestWildcard(t *testing.T) {
	for in, want := range map[string]string{
		"example.com/foo": "example.com/*",
		"a/b/c":           "a/*",
		"noslash":         "noslash/*",
		"":                "/*",
	} {
		if got := Wildcard(in); got != want {
			t.Errorf("Wildcard(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAuthorized(t *testing.T) {
	user := authenticationv1.UserInfo{Username: "u"}
	cases := []struct {
		name   string
		decide func(name string) (admission.AuthorizationDecision, error)
		want   bool
		asked  []string
	}{
		{"exact name allowed", func(n string) (admission.AuthorizationDecision, error) {
			if n == "example.com/foo" {
				return admission.AuthorizationAllow, nil
			}
			return admission.AuthorizationNoOpinion, nil
		}, true, []string{"example.com/foo"}},
		{"wildcard allowed", func(n string) (admission.AuthorizationDecision, error) {
			if n == "example.com/*" {
				return admission.AuthorizationAllow, nil
			}
			return admission.AuthorizationDeny, nil
		}, true, []string{"example.com/foo", "example.com/*"}},
		{"neither", func(string) (admission.AuthorizationDecision, error) {
			return admission.AuthorizationNoOpinion, nil
		}, false, []string{"example.com/foo", "example.com/*"}},
		{"allow with an error does not count", func(string) (admission.AuthorizationDecision, error) {
			return admission.AuthorizationAllow, errors.New("broken")
		}, false, []string{"example.com/foo", "example.com/*"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			authz := admission.AuthorizerFunc(func(_ context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
				if want := Attributes(user, "approve", a.Name); !reflect.DeepEqual(a, want) {
					t.Errorf("Authorize(%+v), want %+v", a, want)
				}
				asked = append(asked, a.Name)
				d, err := tc.decide(a.Name)
				return d, "", err
			})
			if got := Authorized(context.Background(), authz, user, "approve", "example.com/foo"); got != tc.want {
				t.Errorf("Authorized = %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(asked, tc.asked) {
				t.Errorf("asked %v, want %v", asked, tc.asked)
			}
		})
	}
	a := Attributes(user, "sign", "x/y")
	want := admission.AuthorizationAttributes{User: user, Verb: "sign", Name: "x/y", APIGroup: "certificates.k8s.io",
		APIVersion: "*", Resource: "signers", ResourceRequest: true}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("Attributes = %+v, want %+v", a, want)
	}
}
