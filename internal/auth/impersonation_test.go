package auth

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// rules is a test authorizer: it allows "verb|group|resource|subresource|namespace|name"
// (namespace and name may be "*") and answers everything else with no
// opinion and the reason "deny by default". It records what it was asked.
type rules struct {
	allow map[string]bool
	asked []Attributes
}

func newRules(allow ...string) *rules {
	r := &rules{allow: map[string]bool{}}
	for _, a := range allow {
		r.allow[a] = true
	}
	return r
}

func (r *rules) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	r.asked = append(r.asked, a)
	for _, ns := range []string{a.Namespace, "*"} {
		for _, name := range []string{a.Name, "*"} {
			if r.allow[strings.Join([]string{a.Verb, a.APIGroup, a.Resource, a.Subresource, ns, name}, "|")] {
				return DecisionAllow, "", nil
			}
		}
	}
	return DecisionNoOpinion, "deny by default", nil
}

func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

var (
	bob     = authenticationv1.UserInfo{Username: "bob", Groups: []string{AllAuthenticated}}
	getPod  = Attributes{User: bob, Verb: "get", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "ns1", Name: "p"}
	healthz = Attributes{User: bob, Verb: "get", Path: "/healthz"}
)

const (
	legacyAlice  = "impersonate||users||*|alice"
	userInfoOn   = "impersonate-on:user-info:get||pods||ns1|p"
	userInfoUser = "impersonate:user-info|authentication.k8s.io|users||*|alice"
)

type impersonateCase struct {
	name     string
	request  Attributes
	headers  http.Header
	allow    []string
	want     *authenticationv1.UserInfo // nil: an error is expected
	wantImp  bool
	wantCode int32
	wantMsg  string
}

// The expected messages below were compared with kube-apiserver 1.37's
// WithConstrainedImpersonation filter on the same requests and rules.
var impersonateCases = []impersonateCase{
	{name: "no impersonation", request: getPod, headers: headers(), want: &bob},
	{
		name: "groups without a user", request: getPod, headers: headers("Impersonate-Group", "a", "Impersonate-Group", "b"),
		wantCode: 400, wantMsg: `requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"a", "b"}, Extra:map[string][]string(nil)} without impersonating a user name`,
	},
	{
		name: "uid and extra without a user", request: getPod, headers: headers("Impersonate-Uid", "u", "Impersonate-Extra-Example.com%2fScopes", "a"),
		wantCode: 400, wantMsg: `requested &user.DefaultInfo{Name:"", UID:"u", Groups:[]string(nil), Extra:map[string][]string{"example.com/scopes":[]string{"a"}}} without impersonating a user name`,
	},
	{
		name: "denied: user-info is tried first", request: getPod, headers: headers("Impersonate-User", "alice"),
		wantCode: 403, wantMsg: `pods "p" is forbidden: User "bob" cannot impersonate-on:user-info:get resource "pods" in API group "" in the namespace "ns1": deny by default`,
	},
	{
		name: "denied on a non-resource path", request: healthz, headers: headers("Impersonate-User", "alice"),
		wantCode: 403, wantMsg: `forbidden: User "bob" cannot impersonate-on:user-info:get path "/healthz": deny by default`,
	},
	{
		name: "legacy user", request: getPod, headers: headers("Impersonate-User", "alice"), allow: []string{legacyAlice},
		want: &authenticationv1.UserInfo{Username: "alice", Groups: []string{AllAuthenticated}}, wantImp: true,
	},
	{
		name: "legacy user, uid, groups and extra", request: getPod,
		headers: headers("Impersonate-User", "alice", "Impersonate-Uid", "u-1", "Impersonate-Group", "dev", "Impersonate-Group", "system:masters",
			"Impersonate-Extra-Example.com%2fScopes", "s1", "Impersonate-Extra-Example.com%2fScopes", "s2"),
		allow: []string{legacyAlice, "impersonate||groups||*|*", "impersonate|authentication.k8s.io|uids||*|u-1",
			"impersonate|authentication.k8s.io|userextras|example.com/scopes|*|*"},
		want: &authenticationv1.UserInfo{Username: "alice", UID: "u-1", Groups: []string{"dev", "system:masters", AllAuthenticated},
			Extra: map[string]authenticationv1.ExtraValue{"example.com/scopes": {"s1", "s2"}}},
		wantImp: true,
	},
	{
		name: "legacy anonymous gets system:unauthenticated", request: getPod, headers: headers("Impersonate-User", Anonymous),
		allow: []string{"impersonate||users||*|system:anonymous"},
		want:  &authenticationv1.UserInfo{Username: Anonymous, Groups: []string{AllUnauthenticated}}, wantImp: true,
	},
	{
		name: "requested system:unauthenticated stays alone", request: getPod, headers: headers("Impersonate-User", "alice", "Impersonate-Group", AllUnauthenticated),
		allow: []string{legacyAlice, "impersonate||groups||*|*"},
		want:  &authenticationv1.UserInfo{Username: "alice", Groups: []string{AllUnauthenticated}}, wantImp: true,
	},
	{
		name: "legacy service account gets its groups", request: getPod, headers: headers("Impersonate-User", "system:serviceaccount:ns1:default"),
		allow: []string{"impersonate||serviceaccounts||ns1|default"},
		want: &authenticationv1.UserInfo{Username: "system:serviceaccount:ns1:default",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns1", AllAuthenticated}}, wantImp: true,
	},
	{
		name: "legacy service account with groups keeps them", request: getPod,
		headers: headers("Impersonate-User", "system:serviceaccount:ns1:default", "Impersonate-Group", "g"),
		allow:   []string{"impersonate||serviceaccounts||ns1|default", "impersonate||groups||*|g"},
		want:    &authenticationv1.UserInfo{Username: "system:serviceaccount:ns1:default", Groups: []string{"g", AllAuthenticated}}, wantImp: true,
	},
	{
		name: "legacy denied group", request: getPod, headers: headers("Impersonate-User", "alice", "Impersonate-Group", "dev"),
		allow:    []string{legacyAlice},
		wantCode: 403, wantMsg: `pods "p" is forbidden: User "bob" cannot impersonate-on:user-info:get resource "pods" in API group "" in the namespace "ns1": deny by default`,
	},
	{
		name: "arbitrary node", request: getPod, headers: headers("Impersonate-User", "system:node:node1"),
		allow: []string{"impersonate-on:arbitrary-node:get||pods||ns1|p", "impersonate:arbitrary-node|authentication.k8s.io|nodes||*|node1"},
		want:  &authenticationv1.UserInfo{Username: "system:node:node1", Groups: []string{NodesGroup, AllAuthenticated}}, wantImp: true,
	},
	{
		name: "arbitrary node, node check denied", request: getPod, headers: headers("Impersonate-User", "system:node:node1"),
		allow:    []string{"impersonate-on:arbitrary-node:get||pods||ns1|p"},
		wantCode: 403, wantMsg: `nodes.authentication.k8s.io "node1" is forbidden: User "bob" cannot impersonate:arbitrary-node resource "nodes" in API group "authentication.k8s.io" at the cluster scope: deny by default`,
	},
	{
		name: "constrained service account", request: getPod, headers: headers("Impersonate-User", "system:serviceaccount:ns1:default"),
		allow: []string{"impersonate-on:serviceaccount:get||pods||ns1|p", "impersonate:serviceaccount|authentication.k8s.io|serviceaccounts||ns1|default"},
		want: &authenticationv1.UserInfo{Username: "system:serviceaccount:ns1:default",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns1", AllAuthenticated}}, wantImp: true,
	},
	{
		name: "user-info", request: getPod, headers: headers("Impersonate-User", "alice", "Impersonate-Group", "dev"),
		allow: []string{userInfoOn, userInfoUser, "impersonate:user-info|authentication.k8s.io|groups||*|dev"},
		want:  &authenticationv1.UserInfo{Username: "alice", Groups: []string{"dev", AllAuthenticated}}, wantImp: true,
	},
	{
		name: "user-info never grants system:masters", request: getPod, headers: headers("Impersonate-User", "alice", "Impersonate-Group", "system:masters"),
		allow:    []string{userInfoOn, userInfoUser},
		wantCode: 403, wantMsg: `groups.authentication.k8s.io "system:masters" is forbidden: User "bob" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope: impersonating the system:masters group is not allowed`,
	},
	{
		name: "user-info rejects a key that is not a domain-prefixed path", request: getPod, headers: headers("Impersonate-User", "alice", "Impersonate-Extra-Bad%20Key", "v"),
		allow:    []string{userInfoOn, userInfoUser},
		wantCode: 403, wantMsg: `userextras.authentication.k8s.io is forbidden: User "bob" cannot impersonate:user-info resource "userextras" in API group "authentication.k8s.io" at the cluster scope: impersonating an invalid key in extra is not allowed: extra.key: Invalid value: "bad key": must be a domain-prefixed path (such as "acme.io/foo")`,
	},
	{
		name: "user-info: four groups are asked for at once", request: getPod,
		headers: headers("Impersonate-User", "alice", "Impersonate-Group", "a", "Impersonate-Group", "b", "Impersonate-Group", "c", "Impersonate-Group", "d"),
		allow:   []string{userInfoOn, userInfoUser, "impersonate:user-info|authentication.k8s.io|groups||*|*"},
		want:    &authenticationv1.UserInfo{Username: "alice", Groups: []string{"a", "b", "c", "d", AllAuthenticated}}, wantImp: true,
	},
	{
		name: "html in the user name is escaped", request: getPod, headers: headers("Impersonate-User", "<b>&x"),
		wantCode: 403, wantMsg: `pods "p" is forbidden: User "bob" cannot impersonate-on:user-info:get resource "pods" in API group "" in the namespace "ns1": deny by default`,
	},
}

func TestImpersonate(t *testing.T) {
	for _, tt := range impersonateCases {
		t.Run(tt.name, func(t *testing.T) {
			got, imp, err := NewImpersonator(newRules(tt.allow...)).Impersonate(context.Background(), tt.headers.Clone(), tt.request) // Impersonate removes the headers it read
			if tt.want == nil {
				status, ok := err.(*apierrors.StatusError)
				if !ok {
					t.Fatalf("Impersonate() error = %v, want a StatusError", err)
				}
				if status.ErrStatus.Code != tt.wantCode || status.ErrStatus.Message != tt.wantMsg {
					t.Errorf("Impersonate() error = %d %q,\nwant %d %q", status.ErrStatus.Code, status.ErrStatus.Message, tt.wantCode, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Impersonate() error = %v", err)
			}
			if imp != tt.wantImp || !reflect.DeepEqual(got, *tt.want) {
				t.Errorf("Impersonate() = %+v, %v, want %+v, %v", got, imp, *tt.want, tt.wantImp)
			}
		})
	}
}

func TestImpersonateRemovesHeaders(t *testing.T) {
	h := headers("Impersonate-User", "alice", "Impersonate-Group", "g", "Impersonate-Uid", "u", "Impersonate-Extra-K", "v", "Accept", "application/json")
	_, _, err := NewImpersonator(newRules()).Impersonate(context.Background(), h, getPod)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("Impersonate() error = %v, want Forbidden", err)
	}
	if want := (http.Header{"Accept": {"application/json"}}); !reflect.DeepEqual(h, want) {
		t.Errorf("headers after Impersonate() = %v, want %v", h, want)
	}
	bad := headers("Impersonate-Group", "g")
	if _, _, err := NewImpersonator(newRules()).Impersonate(context.Background(), bad, getPod); !apierrors.IsBadRequest(err) {
		t.Fatalf("Impersonate() error = %v, want BadRequest", err)
	}
	if len(bad) != 1 {
		t.Errorf("headers after a bad request = %v, want them untouched", bad)
	}
}

// Once a requester has impersonated through legacy rules, legacy is tried
// first, so its denials are the ones reported (as upstream).
func TestImpersonateRemembersMode(t *testing.T) {
	imp := NewImpersonator(newRules(legacyAlice))
	steps := []struct {
		user    string
		wantMsg string
	}{
		{user: "carol", wantMsg: `pods "p" is forbidden: User "bob" cannot impersonate-on:user-info:get resource "pods" in API group "" in the namespace "ns1": deny by default`},
		{user: "alice"},
		{user: "carol", wantMsg: `users "carol" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope: deny by default`},
		{user: "system:serviceaccount:a:b", wantMsg: `serviceaccounts "b" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "a": deny by default`},
	}
	for i, s := range steps {
		_, _, err := imp.Impersonate(context.Background(), headers("Impersonate-User", s.user), getPod)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != s.wantMsg {
			t.Errorf("step %d: Impersonate(%s) error = %q, want %q", i, s.user, got, s.wantMsg)
		}
	}
}

func TestImpersonateAssociatedNode(t *testing.T) {
	agent := authenticationv1.UserInfo{
		Username: "system:serviceaccount:kube-system:agent",
		Extra: map[string]authenticationv1.ExtraValue{
			nodeNameKey:                             {"node1"},
			"authentication.kubernetes.io/pod-name": {"agent-x"},
		},
	}
	request := getPod
	request.User = agent
	r := newRules("impersonate-on:associated-node:get||pods||ns1|p", "impersonate:associated-node|authentication.k8s.io|nodes||*|*")
	got, _, err := NewImpersonator(r).Impersonate(context.Background(), headers("Impersonate-User", "system:node:node1"), request)
	if err != nil {
		t.Fatalf("Impersonate() error = %v", err)
	}
	if want := (authenticationv1.UserInfo{Username: "system:node:node1", Groups: []string{NodesGroup, AllAuthenticated}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Impersonate() = %+v, want %+v", got, want)
	}
	wantExtra := map[string]authenticationv1.ExtraValue{associatedNodeKeys: {"authentication.kubernetes.io/node-name", "authentication.kubernetes.io/pod-name"}}
	for _, a := range r.asked {
		if !reflect.DeepEqual(a.User.Extra, wantExtra) {
			t.Errorf("authorizer saw extra %v for %s, want %v", a.User.Extra, a.Verb, wantExtra)
		}
	}
	// Bound to node1, the service account is not associated with node2:
	// arbitrary-node applies instead and is not granted.
	_, _, err = NewImpersonator(newRules()).Impersonate(context.Background(), headers("Impersonate-User", "system:node:node2"), request)
	if want := `cannot impersonate-on:arbitrary-node:get`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Impersonate(node2) error = %v, want one containing %q", err, want)
	}
}

func TestExtraKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Scopes", "scopes"},
		{"Example.com%2fScopes", "example.com/scopes"},
		{"Example.com%2FScopes", "example.com/scopes"},
		{"Bad%zzKey", "bad%zzkey"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := extraKey(tt.in); got != tt.want {
				t.Errorf("extraKey(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzImpersonationHeaders(f *testing.F) {
	f.Add("alice", "g", "u", "Example.com%2fk", "v")
	f.Add("", "g", "", "", "")
	f.Add("system:serviceaccount:a:b", "", "", "%zz", "")
	f.Add("system:node:n1", "", "", "", "")
	f.Fuzz(func(t *testing.T, user, group, uid, extraKey, extraValue string) {
		h := http.Header{}
		if user != "" {
			h.Set("Impersonate-User", user)
		}
		if group != "" {
			h.Add("Impersonate-Group", group)
		}
		if uid != "" {
			h.Set("Impersonate-Uid", uid)
		}
		if extraKey != "" {
			h["Impersonate-Extra-"+extraKey] = []string{extraValue}
		}
		allowAll := AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) { return DecisionAllow, "", nil })
		got, imp, err := NewImpersonator(allowAll).Impersonate(context.Background(), h, getPod)
		if err != nil {
			if user != "" {
				t.Errorf("Impersonate() with everything allowed error = %v", err)
			}
			return
		}
		if imp && got.Username != user {
			t.Errorf("Impersonate() user = %q, want %q", got.Username, user)
		}
	})
}

func TestImpersonateConcurrent(t *testing.T) {
	imp := NewImpersonator(AuthorizerFunc(func(_ context.Context, a Attributes) (Decision, string, error) {
		if a.Verb == "impersonate" {
			return DecisionAllow, "", nil
		}
		return DecisionNoOpinion, "", nil
	}))
	done := make(chan error)
	for i := range 8 {
		go func() {
			request := getPod
			request.User = authenticationv1.UserInfo{Username: "requester-" + string(rune('a'+i%3))}
			var err error
			for range 50 {
				if _, _, err = imp.Impersonate(context.Background(), headers("Impersonate-User", "alice"), request); err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Errorf("Impersonate() error = %v", err)
		}
	}
}
