package serviceaccount

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// objects is an honest Getter over a few objects, keyed "kind/ns/name".
type objects map[string]metav1.Object

func (o objects) get(kind, ns, name string) (metav1.Object, error) {
	if obj, ok := o[kind+"/"+ns+"/"+name]; ok {
		return obj, nil
	}
	return nil, fmt.Errorf("%ss %q not found", kind, name)
}

func (o objects) ServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	obj, err := o.get("serviceaccount", ns, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ServiceAccount), nil
}

func (o objects) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	obj, err := o.get("secret", ns, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Secret), nil
}

func (o objects) Pod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	obj, err := o.get("pod", ns, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

func (o objects) Node(_ context.Context, name string) (*corev1.Node, error) {
	obj, err := o.get("node", "", name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Node), nil
}

func TestAuthenticator(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	issuer := NewEphemeralIssuer()
	meta := func(ns, name, uid string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: meta("team", "bot", "sa-1")}
	pod := &corev1.Pod{ObjectMeta: meta("team", "web", "pod-1")}
	node := &corev1.Node{ObjectMeta: meta("", "n1", "node-1")}
	world := objects{"serviceaccount/team/bot": sa, "pod/team/web": pod, "node//n1": node}
	sign := func(bound Bound, issuedAt time.Time, auds ...string) string {
		c := NewClaims(sa, bound, issuedAt, 3600, 0, auds)
		tok, err := issuer.Issue(c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	api := issuer.Audiences
	podToken := sign(Bound{Pod: pod, Node: node}, now, api...)
	wantPodUser := authenticationv1.UserInfo{Username: "system:serviceaccount:team:bot", UID: "sa-1",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team"},
		Extra:  map[string]authenticationv1.ExtraValue{PodNameKey: {"web"}, PodUIDKey: {"pod-1"}, NodeNameKey: {"n1"}, NodeUIDKey: {"node-1"}}}
	other, _ := NewIssuer(issuer.key, "https://elsewhere")
	foreign, _ := other.Issue(NewClaims(sa, Bound{}, now, 3600, 0, api))

	for _, tc := range []struct {
		name, token string
		world       objects
		asked       []string
		at          time.Time
		ok          bool
		user        *authenticationv1.UserInfo
		err         string
	}{
		{name: "pod-bound", token: podToken, ok: true, user: &wantPodUser},
		{name: "asked for its audience", token: sign(Bound{}, now, "vault"), asked: []string{"vault"}, ok: true},
		{name: "other audience", token: sign(Bound{}, now, "vault"),
			err: `token audiences ["vault"] is invalid for the target audiences ["` + api[0] + `"]`},
		{name: "expired", token: podToken, at: now.Add(2 * time.Hour), err: "service account token has expired"},
		{name: "issued in the future", token: podToken, at: now.Add(-time.Hour), err: "service account token is not valid yet"},
		{name: "pod gone", token: podToken, world: objects{"serviceaccount/team/bot": sa, "node//n1": node}, err: "service account token has been invalidated"},
		{name: "pod recreated", token: podToken,
			world: objects{"serviceaccount/team/bot": sa, "pod/team/web": &corev1.Pod{ObjectMeta: meta("team", "web", "pod-2")}},
			err:   "pod UID (pod-2) does not match service account pod ref claim (pod-1)"},
		{name: "service account recreated", token: podToken,
			world: objects{"serviceaccount/team/bot": &corev1.ServiceAccount{ObjectMeta: meta("team", "bot", "sa-2")}},
			err:   "service account UID (sa-2) does not match claim (sa-1)"},
		{name: "node-bound, node recreated", token: sign(Bound{Node: node}, now, api...),
			world: objects{"serviceaccount/team/bot": sa, "node//n1": &corev1.Node{ObjectMeta: meta("", "n1", "node-2")}},
			err:   "node UID (node-2) does not match service account node ref claim (node-1)"},
		{name: "another issuer", token: foreign},
		{name: "not a JWT", token: "s3cret"},
		{name: "tampered", token: podToken[:len(podToken)-4] + "AAAA", err: "invalid service account token signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, at := world, now
			if tc.world != nil {
				w = tc.world
			}
			if !tc.at.IsZero() {
				at = tc.at
			}
			a := issuer.Authenticator(w)
			a.Now = func() time.Time { return at }
			user, _, ok, err := a.AuthenticateToken(context.Background(), tc.token, tc.asked)
			if ok != tc.ok || (err == nil) != (tc.err == "") || (err != nil && !strings.HasPrefix(err.Error(), tc.err)) {
				t.Fatalf("AuthenticateToken = %v, %v; want ok %v and error %q", ok, err, tc.ok, tc.err)
			}
			if tc.user == nil {
				return
			}
			jti := user.Extra[credentialIDKey]
			delete(user.Extra, credentialIDKey)
			if !reflect.DeepEqual(user, *tc.user) || len(jti) != 1 || !strings.HasPrefix(jti[0], "JTI=") {
				t.Errorf("user = %+v (credential %v), want %+v and a JTI credential id", user, jti, *tc.user)
			}
		})
	}
}
