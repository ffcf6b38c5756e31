package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// A request the authorizer does not allow gets upstream's 403 Status; the
// authorizer sees the request's attributes after authentication.
func TestAuthorizeForbidden(t *testing.T) {
	var seen []auth.Attributes
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.Authorizer = auth.AuthorizerFunc(func(_ context.Context, a auth.Attributes) (auth.Decision, string, error) {
		seen = append(seen, a)
		switch a.Resource {
		case "configmaps":
			return auth.DecisionAllow, "", nil
		case "secrets":
			return auth.DecisionDeny, "secrets are private", nil
		case "pods":
			return auth.DecisionNoOpinion, "", errors.New("authorizer down")
		}
		return auth.DecisionNoOpinion, "", nil
	})
	s := New(cfg)
	for _, tc := range []struct {
		method, path string
		code         int
		message      string
	}{
		{"GET", "/api/v1/namespaces/default/configmaps", http.StatusOK, ""},
		{"GET", "/api/v1/namespaces/default/secrets/s", http.StatusForbidden,
			`secrets "s" is forbidden: User "system:anonymous" cannot get resource "secrets" in API group "" in the namespace "default": secrets are private`},
		// a list or watch of one name by field selector is authorized for
		// that name (RBAC resourceNames), as upstream's request info names it
		{"GET", "/api/v1/namespaces/default/secrets?fieldSelector=metadata.name%3Ds", http.StatusForbidden,
			`secrets "s" is forbidden: User "system:anonymous" cannot list resource "secrets" in API group "" in the namespace "default": secrets are private`},
		{"GET", "/api/v1/namespaces/default/secrets?watch=1&fieldSelector=metadata.name%3Ds%2Cmetadata.namespace%3Ddefault", http.StatusForbidden,
			`secrets "s" is forbidden: User "system:anonymous" cannot watch resource "secrets" in API group "" in the namespace "default": secrets are private`},
		{"GET", "/api/v1/namespaces/default/secrets?fieldSelector=metadata.name%21%3Ds", http.StatusForbidden,
			`secrets is forbidden: User "system:anonymous" cannot list resource "secrets" in API group "" in the namespace "default": secrets are private`},
		{"GET", "/apis/apps/v1/deployments", http.StatusForbidden,
			`deployments.apps is forbidden: User "system:anonymous" cannot list resource "deployments" in API group "apps" at the cluster scope`},
		{"GET", "/apis", http.StatusForbidden, `forbidden: User "system:anonymous" cannot get path "/apis"`},
		{"GET", "/api/v1/namespaces/default/pods", http.StatusInternalServerError, ""},
		{"GET", "/healthz", http.StatusForbidden, `forbidden: User "system:anonymous" cannot get path "/healthz"`}, // authorized like any path
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
			if w.Code != tc.code {
				t.Fatalf("%s %s = %d %s, want %d", tc.method, tc.path, w.Code, w.Body.String(), tc.code)
			}
			if tc.code != http.StatusForbidden {
				return
			}
			var st metav1.Status
			if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
				t.Fatal(err)
			}
			if st.Kind != "Status" || st.Status != metav1.StatusFailure || st.Reason != metav1.StatusReasonForbidden || st.Code != http.StatusForbidden || st.Message != tc.message {
				t.Errorf("Status = %+v, want Failure, Forbidden, 403 and message %q", st, tc.message)
			}
		})
	}
	if len(seen) == 0 || seen[0].User.Username != "system:anonymous" || seen[0].Verb != "list" || seen[0].Namespace != "default" {
		t.Errorf("first attributes = %+v, want a list of configmaps in default by system:anonymous", seen)
	}
}

// A connect request is authorized with the verb of its method, as
// upstream's request info names it: RBAC's "create pods/exec" allows exec.
func TestConnectVerbs(t *testing.T) {
	var seen []string
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.Authorizer = auth.AuthorizerFunc(func(_ context.Context, a auth.Attributes) (auth.Decision, string, error) {
		seen = append(seen, a.Verb+" "+a.Resource+"/"+a.Subresource)
		return auth.DecisionDeny, "", nil
	})
	s := New(cfg)
	for _, req := range []struct{ method, path string }{
		{"POST", "/api/v1/namespaces/default/pods/p/exec"},
		{"GET", "/api/v1/namespaces/default/pods/p/attach"},
		{"POST", "/api/v1/namespaces/default/pods/p/portforward"},
		{"GET", "/api/v1/namespaces/default/services/s/proxy"},
	} {
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(req.method, req.path, nil))
	}
	want := []string{"create pods/exec", "get pods/attach", "create pods/portforward", "get services/proxy"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("authorized as %v, want %v", seen, want)
	}
}
