package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/admitd/admitd/internal/auth"
)

const (
	ssrrPath = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
	ssrPath  = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
	trPath   = "/apis/authentication.k8s.io/v1/tokenreviews"
)

func TestSelfSubjectRulesReview(t *testing.T) {
	resolver := &listingPolicy{}
	body := `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"team"}}`
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{name: "resolver", edit: func(c *Config) { c.Authorizer = resolver },
			want: `{"resourceRules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}],"nonResourceRules":[],"incomplete":true,"evaluationError":"role gone"}`},
		{name: "allow all",
			want: `{"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}],"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}],"incomplete":false}`},
		{name: "authorizer without rules", edit: func(c *Config) { c.Authorizer = &policy{} },
			want: `{"resourceRules":[],"nonResourceRules":[],"incomplete":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := reviewServer(t, tc.edit)
			w := ts.do("POST", ssrrPath, "application/json", body)
			if w.Code != http.StatusCreated {
				t.Fatalf("POST %s = %d %s, want 201", ssrrPath, w.Code, w.Body.String())
			}
			var got struct {
				Spec   json.RawMessage `json:"spec"`
				Status json.RawMessage `json:"status"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if string(got.Status) != tc.want || string(got.Spec) != "{}" || !strings.Contains(w.Body.String(), `"kind":"SelfSubjectRulesReview"`) {
				t.Errorf("SelfSubjectRulesReview spec, status = %s, %s; want {} (not echoed), %s", got.Spec, got.Status, tc.want)
			}
		})
	}
	ts := reviewServer(t, nil)
	w := ts.do("POST", ssrrPath, "application/json", `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{}}`)
	if _, msg := statusMessage(t, w.Body.Bytes()); w.Code != http.StatusBadRequest || msg != "no namespace on request" {
		t.Errorf("SelfSubjectRulesReview without namespace = %d %q, want 400 no namespace on request", w.Code, msg)
	}
}

func TestSelfSubjectReview(t *testing.T) {
	ts := reviewServer(t, nil)
	w := ts.do("POST", ssrPath, "application/json", `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","metadata":{"name":"ignored"}}`)
	if w.Code != http.StatusCreated {
		t.Fatalf("POST %s = %d %s, want 201", ssrPath, w.Code, w.Body.String())
	}
	var got authenticationv1.SelfSubjectReview
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := authenticationv1.UserInfo{Username: "alice", UID: "42", Groups: []string{"dev"}, Extra: map[string]authenticationv1.ExtraValue{"scope": {"a"}}}
	if !reflect.DeepEqual(got.Status.UserInfo, want) || got.Name != "" || got.CreationTimestamp.IsZero() || got.Kind != "SelfSubjectReview" {
		t.Errorf("SelfSubjectReview = %s, want alice with uid and extra, a creationTimestamp and no name", w.Body.String())
	}
}

// tokens is an honest AudienceTokenAuthenticator: the token "good" is carol
// for the audience "api" only.
type tokens struct{ lie bool }

func (tk tokens) AuthenticateToken(_ context.Context, token string, auds []string) (authenticationv1.UserInfo, []string, bool, error) {
	if tk.lie {
		return authenticationv1.UserInfo{Username: "carol"}, []string{"elsewhere"}, true, nil
	}
	if token != "good" || (len(auds) > 0 && !reflect.DeepEqual(auds, []string{"api"})) {
		return authenticationv1.UserInfo{}, nil, false, errors.New("invalid bearer token")
	}
	return authenticationv1.UserInfo{Username: "carol", Groups: []string{"system:authenticated"}}, []string{"api"}, true, nil
}

func TestTokenReview(t *testing.T) {
	tr := func(spec string) string {
		return `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":` + spec + `}`
	}
	for _, tc := range []struct {
		name string
		tk   auth.AudienceTokenAuthenticator
		body string
		code int
		want string // status JSON, or the Status message
	}{
		{name: "authenticated for the API audiences", tk: tokens{}, body: tr(`{"token":"good"}`), code: 201,
			want: `{"authenticated":true,"user":{"username":"carol","groups":["system:authenticated"]},"audiences":["api"]}`},
		{name: "foreign audience", tk: tokens{}, body: tr(`{"token":"good","audiences":["other"]}`), code: 201,
			want: `{"user":{},"error":"invalid bearer token"}`},
		{name: "unknown token", tk: tokens{}, body: tr(`{"token":"bad"}`), code: 201,
			want: `{"user":{},"error":"invalid bearer token"}`},
		{name: "no token authenticator", body: tr(`{"token":"good"}`), code: 201, want: `{"user":{},"error":"invalid bearer token"}`},
		{name: "no token", tk: tokens{}, body: tr(`{}`), code: 400, want: "token is required for TokenReview in authentication"},
		{name: "audiences the authenticator made up", tk: tokens{lie: true}, body: tr(`{"token":"good"}`), code: 500,
			want: "Internal error occurred: error validating audiences"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := reviewServer(t, func(c *Config) {
				c.TokenAuthenticator = tc.tk
				c.TokenIssuer = nil
			})
			ts.s.tokens.Audiences = []string{"api"}
			w := ts.do("POST", trPath, "application/json", tc.body)
			if w.Code != tc.code {
				t.Fatalf("POST %s %s = %d %s, want %d", trPath, tc.body, w.Code, w.Body.String(), tc.code)
			}
			if tc.code != http.StatusCreated {
				if _, msg := statusMessage(t, w.Body.Bytes()); msg != tc.want {
					t.Errorf("POST %s message = %q, want %q", trPath, msg, tc.want)
				}
				return
			}
			var got struct {
				Spec   authenticationv1.TokenReviewSpec `json:"spec"`
				Status json.RawMessage                  `json:"status"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if string(got.Status) != tc.want || !strings.Contains(tc.body, got.Spec.Token) {
				t.Errorf("TokenReview status = %s, want %s with the spec echoed", got.Status, tc.want)
			}
		})
	}
}

// A token the server issued through serviceaccounts/token reviews as its
// service account until the service account is deleted.
func TestTokenReviewServiceAccountToken(t *testing.T) {
	ts := reviewServer(t, nil)
	ts.must(http.StatusCreated, "POST", "/api/v1/namespaces/default/serviceaccounts", "application/json",
		`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"bot"}}`)
	w := ts.do("POST", "/api/v1/namespaces/default/serviceaccounts/bot/token", "application/json",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`)
	var req authenticationv1.TokenRequest
	if err := json.Unmarshal(w.Body.Bytes(), &req); err != nil || req.Status.Token == "" {
		t.Fatalf("TokenRequest = %d %s", w.Code, w.Body.String())
	}
	review := func() authenticationv1.TokenReviewStatus {
		t.Helper()
		w := ts.do("POST", trPath, "application/json", `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"`+req.Status.Token+`"}}`)
		var got authenticationv1.TokenReview
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusCreated {
			t.Fatalf("TokenReview = %d %s", w.Code, w.Body.String())
		}
		return got.Status
	}
	st := review()
	wantGroups := []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}
	if !st.Authenticated || st.User.Username != "system:serviceaccount:default:bot" || !reflect.DeepEqual(st.User.Groups, wantGroups) ||
		!reflect.DeepEqual(st.Audiences, ts.s.tokens.Audiences) || len(st.User.Extra["authentication.kubernetes.io/credential-id"]) != 1 {
		t.Errorf("TokenReview of the service account's token = %+v, want bot in %v with a credential id, for the API audiences", st, wantGroups)
	}
	ts.must(http.StatusOK, "DELETE", "/api/v1/namespaces/default/serviceaccounts/bot", "", "")
	if st := review(); st.Authenticated || st.Error != `serviceaccounts "bot" not found` {
		t.Errorf("TokenReview after the service account is gone = %+v, want not authenticated, serviceaccounts \"bot\" not found", st)
	}
}

// listingPolicy is a policy that also lists rules, as RBAC does: alice has
// one in "team", and one of her bindings is broken.
type listingPolicy struct{ policy }

func (*listingPolicy) RulesReview(u authenticationv1.UserInfo, ns string) (
	[]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	if u.Username != "alice" || ns != "team" {
		return nil, nil, false, nil
	}
	return []authorizationv1.ResourceRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}},
		nil, true, errors.New("role gone")
}
