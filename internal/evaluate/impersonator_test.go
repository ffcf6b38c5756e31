package evaluate

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const impersonationRBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: impersonator}
rules:
- {apiGroups: [""], resources: [users], verbs: [impersonate], resourceNames: [frank]}
- {apiGroups: [""], resources: [groups], verbs: [impersonate], resourceNames: [testers]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: impersonator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonator}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: dave}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: writer, namespace: default}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [create]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: writer, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: writer}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: frank}]`

func TestRunImpersonatedByAnotherUser(t *testing.T) {
	dave := &User{Name: "dave", UID: "dave-uid", Groups: []string{"devs"}}
	rbac := ServerConfig{AuthorizationModes: []string{"RBAC"}}
	// the groups as a webhook's AdmissionReview shows them, system:authenticated last
	frank := User{Name: "frank", Groups: []string{"testers", "system:authenticated"}}
	r, err := Run(context.Background(), Input{Objects: objects(t, impersonationRBAC), Server: rbac,
		Request: Request{Object: configMap("c"), User: frank, Impersonator: dave}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Allowed || r.Trace == nil {
		t.Fatalf("Run(dave as frank) = %s %+v, want allowed with a trace", r.Decision, r.Status)
	}
	if q := r.Trace.Request; q.User != "frank" || q.Impersonator != "dave" || !reflect.DeepEqual(q.Groups, frank.Groups) {
		t.Errorf("trace request = %s %v impersonated by %q, want frank %v by dave", q.User, q.Groups, q.Impersonator, frank.Groups)
	}
	r, err = Run(context.Background(), Input{Objects: objects(t, impersonationRBAC), Server: rbac,
		Request: Request{Object: configMap("c"), User: User{Name: "frank", Groups: []string{"system:masters"}}, Impersonator: dave}})
	if err != nil {
		t.Fatal(err)
	}
	// the server's words (those of constrained impersonation's first mode)
	if r.Allowed || r.Status == nil || r.Status.Code != 403 || !strings.Contains(r.Status.Message, `User "dave" cannot impersonate`) {
		t.Errorf("Run(dave as frank in system:masters) = %v %+v, want a 403: dave cannot impersonate", r.Allowed, r.Status)
	}
}

func TestCheckImpersonator(t *testing.T) {
	for _, u := range []*User{{}, {Name: "a", Extra: map[string][]string{"k": {"v"}}}, {Name: "a", Groups: []string{"x,y"}}} {
		var ce *ConfigError
		if err := checkRequest(&Request{Object: configMap("c"), Impersonator: u}); !errors.As(err, &ce) || !strings.Contains(err.Error(), "impersonator") {
			t.Errorf("checkRequest(impersonator %+v) = %v, want a ConfigError", u, err)
		}
	}
}

func TestImpersonatedGroups(t *testing.T) {
	for _, tc := range []struct {
		user User
		want []string
	}{
		{User{Name: "a", Groups: []string{"x", "system:authenticated"}}, []string{"x"}},
		{User{Name: "a", Groups: []string{"system:authenticated", "x"}}, []string{"system:authenticated", "x"}},
		{User{Name: "system:serviceaccount:ns:sa", Groups: []string{"system:authenticated"}}, []string{"system:authenticated"}},
		{User{Name: "a", Groups: []string{"system:unauthenticated", "system:authenticated"}}, []string{"system:unauthenticated", "system:authenticated"}},
		{User{Name: "a", Groups: []string{"x"}}, []string{"x"}},
	} {
		if got := impersonatedGroups(tc.user); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("impersonatedGroups(%v) = %v, want %v", tc.user.Groups, got, tc.want)
		}
	}
}
