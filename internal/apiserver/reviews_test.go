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
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// policy is an honest fake authorizer: alice may read pods, secrets are
// denied to all, the verb "explode" breaks it, everyone may get /healthz.
// It lets everyone at the review resources (the check of the request itself, not
// recorded) and records the attributes the reviews asked about.
type policy struct{ seen []auth.Attributes }

func (p *policy) Authorize(_ context.Context, a auth.Attributes) (auth.Decision, string, error) {
	if a.ResourceRequest && strings.HasSuffix(a.Resource, "reviews") {
		return auth.DecisionAllow, "", nil
	}
	p.seen = append(p.seen, a)
	switch {
	case a.Verb == "explode":
		return auth.DecisionNoOpinion, "", errors.New("authorizer down")
	case a.Resource == "secrets":
		return auth.DecisionDeny, "secrets are private", nil
	case a.ResourceRequest && a.User.Username == "alice" && a.Verb == "get" && a.Resource == "pods":
		return auth.DecisionAllow, "alice reads pods", nil
	case !a.ResourceRequest && a.Path == "/healthz" && a.Verb == "get":
		return auth.DecisionAllow, "", nil
	}
	return auth.DecisionNoOpinion, "", nil
}

// reviewServer serves reviews as alice (groups dev, extra scope=a) with
// cfg changed by edit.
func reviewServer(t *testing.T, edit func(*Config)) *testServer {
	t.Helper()
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.Authenticate = func(*http.Request) (authenticationv1.UserInfo, *authenticationv1.UserInfo, error) {
		return authenticationv1.UserInfo{Username: "alice", UID: "42", Groups: []string{"dev"},
			Extra: map[string]authenticationv1.ExtraValue{"scope": {"a"}}}, nil, nil
	}
	if edit != nil {
		edit(&cfg)
	}
	s := New(cfg)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	return &testServer{t: t, s: s}
}

// accessCase is one access review sent to path and what must come back:
// the status on 201, the Status message otherwise.
type accessCase struct {
	name, path, body string
	code             int
	status           authorizationv1.SubjectAccessReviewStatus
	message          string
	// prefix compares only the start of the message.
	prefix bool
}

func runAccessCases(t *testing.T, ts *testServer, cases []accessCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := ts.do("POST", tc.path, "application/json", tc.body)
			if w.Code != tc.code {
				t.Fatalf("POST %s %s = %d %s, want %d", tc.path, tc.body, w.Code, w.Body.String(), tc.code)
			}
			if tc.code != http.StatusCreated {
				_, got := statusMessage(t, w.Body.Bytes())
				if got != tc.message && !(tc.prefix && strings.HasPrefix(got, tc.message)) {
					t.Errorf("POST %s message = %q, want %q", tc.path, got, tc.message)
				}
				return
			}
			var got struct {
				Status authorizationv1.SubjectAccessReviewStatus `json:"status"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Status != tc.status {
				t.Errorf("POST %s status = %+v, want %+v", tc.path, got.Status, tc.status)
			}
		})
	}
}

const (
	sarPath  = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
	lsarPath = "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews"
	ssarPath = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
)

func sar(kind, spec string) string {
	return `{"apiVersion":"authorization.k8s.io/v1","kind":"` + kind + `","spec":` + spec + `}`
}

func TestSubjectAccessReview(t *testing.T) {
	ts := reviewServer(t, func(c *Config) { c.Authorizer = &policy{} })
	runAccessCases(t, ts, []accessCase{
		{name: "allowed", path: sarPath, code: 201,
			body:   sar("SubjectAccessReview", `{"user":"alice","resourceAttributes":{"verb":"get","resource":"pods","namespace":"x"}}`),
			status: authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "alice reads pods"}},
		{name: "denied", path: sarPath, code: 201,
			body:   sar("SubjectAccessReview", `{"user":"alice","resourceAttributes":{"verb":"get","resource":"secrets"}}`),
			status: authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "secrets are private"}},
		{name: "no opinion", path: sarPath, code: 201,
			body: sar("SubjectAccessReview", `{"user":"bob","resourceAttributes":{"verb":"get","resource":"pods"}}`)},
		{name: "groups only", path: sarPath, code: 201,
			body: sar("SubjectAccessReview", `{"groups":["dev"],"resourceAttributes":{"verb":"get","resource":"pods"}}`)},
		{name: "evaluation error", path: sarPath, code: 201,
			body:   sar("SubjectAccessReview", `{"user":"alice","resourceAttributes":{"verb":"explode","resource":"pods"}}`),
			status: authorizationv1.SubjectAccessReviewStatus{EvaluationError: "authorizer down"}},
		{name: "non-resource", path: sarPath, code: 201,
			body:   sar("SubjectAccessReview", `{"user":"bob","nonResourceAttributes":{"verb":"get","path":"/healthz"}}`),
			status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}},
		{name: "selector that does not parse", path: sarPath, code: 201,
			body: sar("SubjectAccessReview", `{"user":"bob","resourceAttributes":{"verb":"list","resource":"pods",`+
				`"fieldSelector":{"requirements":[{"key":"a","operator":"Exists"},{"key":"b","operator":"In","values":["x"]}]},`+
				`"labelSelector":{"rawSelector":"a in (("}}}`),
			status: authorizationv1.SubjectAccessReviewStatus{EvaluationError: "spec.resourceAttributes.fieldSelector partially ignored due to parse error; " +
				"spec.resourceAttributes.labelSelector ignored due to parse error"}},
		{name: "empty spec", path: sarPath, code: 422, body: sar("SubjectAccessReview", `{}`),
			message: `.authorization.k8s.io "" is invalid: [spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, ` +
				`spec.user: Invalid value: "": at least one of user or group must be specified]`},
		{name: "both attributes", path: sarPath, code: 422,
			body: sar("SubjectAccessReview", `{"user":"a","resourceAttributes":{},"nonResourceAttributes":{}}`),
			message: `.authorization.k8s.io "" is invalid: spec: Invalid value: {"Path":"","Verb":""}: ` +
				`exactly one of nonResourceAttributes or resourceAttributes must be specified`},
		{name: "a name", path: sarPath, code: 422,
			body:    `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","metadata":{"name":"x"},"spec":{"user":"a","resourceAttributes":{}}}`,
			message: `.authorization.k8s.io "" is invalid: metadata: Invalid value: {"name":"x","managedFields":[{"manager":"unit-test","operation":"Update"`, prefix: true},
		{name: "selector both ways", path: sarPath, code: 422,
			body: sar("SubjectAccessReview", `{"user":"a","resourceAttributes":{"labelSelector":{"rawSelector":"a=b","requirements":[{"key":"a","operator":"In","values":["b"]}]},"fieldSelector":{}}}`),
			message: `.authorization.k8s.io "" is invalid: [spec.resourceAttributes.fieldSelector.requirements: Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector is required, ` +
				`spec.resourceAttributes.labelSelector.rawSelector: Invalid value: "a=b": may not specified at the same time as requirements]`},
	})
}

func TestLocalSubjectAccessReview(t *testing.T) {
	ts := reviewServer(t, func(c *Config) { c.Authorizer = &policy{} })
	runAccessCases(t, ts, []accessCase{
		{name: "allowed", path: lsarPath, code: 201,
			body:   sar("LocalSubjectAccessReview", `{"user":"alice","resourceAttributes":{"verb":"get","resource":"pods","namespace":"default"}}`),
			status: authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "alice reads pods"}},
		{name: "other namespace", path: lsarPath, code: 422,
			body:    sar("LocalSubjectAccessReview", `{"user":"alice","resourceAttributes":{"verb":"get","resource":"pods","namespace":"kube-system"}}`),
			message: `.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "kube-system": must match metadata.namespace`},
		{name: "non-resource", path: lsarPath, code: 422,
			body:    sar("LocalSubjectAccessReview", `{"user":"alice","nonResourceAttributes":{"verb":"get","path":"/healthz"}}`),
			message: `.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: {"Path":"/healthz","Verb":"get"}: disallowed on this kind of request`},
		{name: "namespace of the body differs", path: lsarPath, code: 400,
			body:    `{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","metadata":{"namespace":"other"},"spec":{"user":"a","resourceAttributes":{"namespace":"other"}}}`,
			message: "the namespace of the provided object does not match the namespace sent on the request"},
	})
}

func TestSelfSubjectAccessReview(t *testing.T) {
	p := &policy{}
	ts := reviewServer(t, func(c *Config) { c.Authorizer = p })
	runAccessCases(t, ts, []accessCase{
		{name: "allowed", path: ssarPath, code: 201,
			body:   sar("SelfSubjectAccessReview", `{"resourceAttributes":{"verb":"get","resource":"pods","namespace":"default"}}`),
			status: authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "alice reads pods"}},
		{name: "no opinion", path: ssarPath, code: 201,
			body: sar("SelfSubjectAccessReview", `{"resourceAttributes":{"verb":"delete","resource":"pods"}}`)},
		{name: "empty spec", path: ssarPath, code: 422, body: sar("SelfSubjectAccessReview", `{}`),
			message: `.authorization.k8s.io "" is invalid: spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`},
	})
	want := auth.Attributes{User: authenticationv1.UserInfo{Username: "alice", UID: "42", Groups: []string{"dev"}, Extra: map[string]authenticationv1.ExtraValue{"scope": {"a"}}},
		Verb: "get", ResourceRequest: true, APIVersion: "*", Resource: "pods", Namespace: "default"}
	if len(p.seen) == 0 || !reflect.DeepEqual(p.seen[0], want) {
		t.Errorf("authorizer asked %+v, want %+v", p.seen, want)
	}
}

// The attributes the authorizer sees carry the spec's user and the
// selectors; a review is answered, not stored, and can be repeated.
func TestSubjectAccessReviewAttributesAndRepeat(t *testing.T) {
	p := &policy{}
	ts := reviewServer(t, func(c *Config) { c.Authorizer = p })
	body := sar("SubjectAccessReview", `{"user":"bob","uid":"7","groups":["g"],"extra":{"k":["v"]},"resourceAttributes":{"verb":"list","group":"apps","version":"v1",`+
		`"resource":"deployments","subresource":"scale","name":"n","namespace":"ns","fieldSelector":{"rawSelector":"spec.x=y"},`+
		`"labelSelector":{"requirements":[{"key":"app","operator":"In","values":["web"]}]}}}`)
	for i := 0; i < 2; i++ {
		ts.must(http.StatusCreated, "POST", sarPath+"?dryRun=All", "application/json", body)
		ts.must(http.StatusCreated, "POST", sarPath, "application/json", body)
	}
	if len(p.seen) != 4 {
		t.Fatalf("authorizer asked %d times, want 4", len(p.seen))
	}
	a := p.seen[0]
	if a.User.Username != "bob" || a.User.UID != "7" || a.User.Groups[0] != "g" || a.User.Extra["k"][0] != "v" ||
		a.APIGroup != "apps" || a.APIVersion != "v1" || a.Subresource != "scale" || a.Name != "n" || a.Namespace != "ns" {
		t.Errorf("attributes = %+v, want bob's list of deployments/scale n in ns", a)
	}
	if fs := a.FieldSelector; len(fs) != 1 || fs[0].Field != "spec.x" || fs[0].Value != "y" || len(a.LabelSelector) != 1 || a.LabelSelector[0].String() != "app in (web)" {
		t.Errorf("selectors = %q, %q; want spec.x=y and app in (web)", a.FieldSelector, a.LabelSelector)
	}
	for _, path := range []string{sarPath, ssarPath, lsarPath} {
		if w := ts.do("GET", path, "", ""); w.Code != http.StatusMethodNotAllowed {
			t.Errorf("GET %s = %d %s, want 405: reviews are only created", path, w.Code, w.Body.String())
		}
	}
}

// Without an authorizer every access review is allowed (AlwaysAllow).
func TestAccessReviewsAllowAllByDefault(t *testing.T) {
	ts := reviewServer(t, nil)
	allowed := authorizationv1.SubjectAccessReviewStatus{Allowed: true}
	runAccessCases(t, ts, []accessCase{
		{name: "sar", path: sarPath, code: 201, status: allowed,
			body: sar("SubjectAccessReview", `{"user":"x","resourceAttributes":{"verb":"get","resource":"secrets"}}`)},
		{name: "ssar", path: ssarPath, code: 201, status: allowed,
			body: sar("SelfSubjectAccessReview", `{"nonResourceAttributes":{"verb":"get","path":"/x"}}`)},
	})
	if strings.Contains(ts.do("GET", sarPath, "", "").Body.String(), `"items":[{`) {
		t.Errorf("a SubjectAccessReview was stored")
	}
}
