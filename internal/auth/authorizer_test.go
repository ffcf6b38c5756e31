package auth

import (
	"context"
	"errors"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestForbidden(t *testing.T) {
	alice := authenticationv1.UserInfo{Username: "alice"}
	tests := []struct {
		name   string
		attrs  Attributes
		reason string
		want   string
	}{
		{
			name:  "cluster scope",
			attrs: Attributes{User: alice, Verb: "impersonate", ResourceRequest: true, Resource: "users", Name: "bob"},
			want:  `users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`,
		},
		{
			name:   "namespaced, with reason",
			attrs:  Attributes{User: alice, Verb: "get", ResourceRequest: true, Resource: "pods", Namespace: "ns", Name: "p"},
			reason: "RBAC: denied",
			want:   `pods "p" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "ns": RBAC: denied`,
		},
		{
			name:  "group and subresource, no name",
			attrs: Attributes{User: alice, Verb: "impersonate", ResourceRequest: true, APIGroup: "authentication.k8s.io", Resource: "userextras", Subresource: "scopes"},
			want:  `userextras.authentication.k8s.io is forbidden: User "alice" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope`,
		},
		{
			name:  "non-resource",
			attrs: Attributes{User: alice, Verb: "get", Path: "/metrics"},
			want:  `forbidden: User "alice" cannot get path "/metrics"`,
		},
		{
			name:   "HTML escaped, reason kept",
			attrs:  Attributes{User: authenticationv1.UserInfo{Username: "<a>&"}, Verb: "get", Path: "/"},
			reason: "<r>",
			want:   `forbidden: User "&lt;a&gt;&amp;" cannot get path "/": <r>`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Forbidden(tt.attrs, tt.reason)
			if err.ErrStatus.Code != 403 || err.ErrStatus.Message != tt.want {
				t.Errorf("Forbidden() = %d %q,\nwant 403 %q", err.ErrStatus.Code, err.ErrStatus.Message, tt.want)
			}
			gr := schema.GroupResource{Group: tt.attrs.APIGroup, Resource: tt.attrs.Resource}
			if d := err.ErrStatus.Details; d == nil || d.Group != gr.Group || d.Kind != gr.Resource || d.Name != tt.attrs.Name {
				t.Errorf("Forbidden() details = %+v, want group %q kind %q name %q", d, gr.Group, gr.Resource, tt.attrs.Name)
			}
		})
	}
}

func TestAuthorize(t *testing.T) {
	attrs := Attributes{User: authenticationv1.UserInfo{Username: "u"}, Verb: "impersonate", ResourceRequest: true, Resource: "users", Name: "x"}
	prefix := `users "x" is forbidden: User "u" cannot impersonate resource "users" in API group "" at the cluster scope`
	own := apierrors.NewForbidden(schema.GroupResource{Resource: "things"}, "t", errors.New("mine"))
	tests := []struct {
		name     string
		decision Decision
		reason   string
		err      error
		want     string // "" means allowed
	}{
		{name: "allow", decision: DecisionAllow},
		{name: "allow despite an error", decision: DecisionAllow, err: errors.New("partial")},
		{name: "no opinion", decision: DecisionNoOpinion, want: prefix},
		{name: "deny with reason", decision: DecisionDeny, reason: "no", want: prefix + ": no"},
		{name: "error", decision: DecisionNoOpinion, err: errors.New("boom"), want: prefix + ": boom"},
		{name: "error and reason", decision: DecisionDeny, reason: "no", err: errors.New("boom"), want: prefix + ": boom: no"},
		{name: "authorizer's own 403 is kept", decision: DecisionDeny, err: own, want: own.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) { return tt.decision, tt.reason, tt.err })
			err := authorize(context.Background(), a, attrs)
			got := ""
			if err != nil {
				got = err.Error()
				if !apierrors.IsForbidden(err) {
					t.Errorf("authorize() error %v is not a Forbidden StatusError", err)
				}
			}
			if got != tt.want {
				t.Errorf("authorize() = %q, want %q", got, tt.want)
			}
		})
	}
}
