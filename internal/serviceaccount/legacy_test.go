package serviceaccount

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLegacyAuthenticator(t *testing.T) {
	issuer := NewEphemeralIssuer()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "bot", UID: "sa-1"}}
	secretMeta := metav1.ObjectMeta{Namespace: "team", Name: "bot-token", UID: "secret-1"}
	token, err := issuer.IssueLegacy(sa, &corev1.Secret{ObjectMeta: secretMeta})
	if err != nil {
		t.Fatal(err)
	}
	holding := func(tok string, labels map[string]string) *corev1.Secret {
		m := secretMeta
		m.Labels = labels
		return &corev1.Secret{ObjectMeta: m, Data: map[string][]byte{corev1.ServiceAccountTokenKey: []byte(tok)}}
	}
	world := objects{"serviceaccount/team/bot": sa, "secret/team/bot-token": holding(token, nil)}
	keys, _ := NewKeys(issuer.key)
	for _, tc := range []struct {
		name   string
		token  string
		lookup bool
		world  objects
		asked  []string
		ok     bool
		err    string
	}{
		{name: "valid", token: token, lookup: true, ok: true},
		{name: "secret deleted", token: token, lookup: true, world: objects{"serviceaccount/team/bot": sa},
			err: "Token has been invalidated"},
		{name: "secret deleted, no lookup", token: token, world: objects{}, ok: true},
		{name: "secret holds another token", token: token, lookup: true,
			world: objects{"serviceaccount/team/bot": sa, "secret/team/bot-token": holding("other", nil)},
			err:   "Token does not match server's copy"},
		{name: "service account recreated", token: token, lookup: true,
			world: objects{"secret/team/bot-token": holding(token, nil), "serviceaccount/team/bot": &corev1.ServiceAccount{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "bot", UID: "sa-2"}}},
			err: "ServiceAccount UID (sa-2) does not match claim (sa-1)"},
		{name: "marked invalid", token: token, lookup: true,
			world: objects{"serviceaccount/team/bot": sa, "secret/team/bot-token": holding(token, map[string]string{LegacyTokenInvalidSinceLabel: "2026-01-01"})},
			err:   "the token in secret team/bot-token for service account team/bot has been marked invalid"},
		{name: "other audience asked", token: token, asked: []string{"vault"}, err: "token audiences"},
		{name: "bound token is not legacy", token: mustIssue(t, issuer, sa)},
		{name: "tampered", token: token[:len(token)-4] + "AAAA", err: "invalid service account token signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := world
			if tc.world != nil {
				w = tc.world
			}
			a := &LegacyAuthenticator{Keys: keys, Audiences: issuer.Audiences, Lookup: tc.lookup, Objects: w}
			user, _, ok, err := a.AuthenticateToken(context.Background(), tc.token, tc.asked)
			if ok != tc.ok || (err == nil) != (tc.err == "") || (err != nil && !strings.HasPrefix(err.Error(), tc.err)) {
				t.Fatalf("AuthenticateToken = %v, %v; want ok %v and error %q", ok, err, tc.ok, tc.err)
			}
			if ok && (user.Username != "system:serviceaccount:team:bot" || user.UID != "sa-1" ||
				strings.Join(user.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:team" || user.Extra != nil) {
				t.Errorf("user = %+v, want system:serviceaccount:team:bot (sa-1) in its groups, no extras", user)
			}
			if err != nil && strings.Contains(err.Error(), tc.token) {
				t.Errorf("error %q contains the token", err)
			}
		})
	}
}

func TestCheckLegacyClaims(t *testing.T) {
	full := legacyClaims{ServiceAccountName: "bot", ServiceAccountUID: "u", SecretName: "s", Namespace: "team"}
	for _, tc := range []struct {
		name, sub string
		c         legacyClaims
		err       string
	}{
		{"complete", "system:serviceaccount:team:bot", full, ""},
		{"no subject", "", full, "sub claim is missing"},
		{"no uid", "system:serviceaccount:team:bot", legacyClaims{ServiceAccountName: "bot", SecretName: "s", Namespace: "team"}, "serviceAccountUID claim is missing"},
		{"subject of another account", "system:serviceaccount:team:other", full, "sub claim is invalid"},
		{"subject not an account", "alice", full, "sub claim is invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkLegacyClaims(tc.sub, tc.c)
			if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Errorf("checkLegacyClaims = %v, want %q", err, tc.err)
			}
		})
	}
}

func mustIssue(t *testing.T, i *Issuer, sa *corev1.ServiceAccount) string {
	t.Helper()
	tok, err := i.Issue(NewClaims(sa, Bound{}, time.Now(), 3600, 0, i.Audiences))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// recorder is a LegacyTracker that notes what it is told.
type recorder struct{ notes []string }

func (r *recorder) Annotate(_ context.Context, k, v string) { r.notes = append(r.notes, k+"="+v) }
func (r *recorder) Warn(_ context.Context, text string)     { r.notes = append(r.notes, "warning") }
func (r *recorder) Used(_ context.Context, s *corev1.Secret) {
	r.notes = append(r.notes, "used "+s.Name)
}

func TestLegacyTracking(t *testing.T) {
	issuer := NewEphemeralIssuer()
	keys, _ := NewKeys(issuer.key)
	meta := metav1.ObjectMeta{Namespace: "team", Name: "bot", UID: "sa-1"}
	secretMeta := metav1.ObjectMeta{Namespace: "team", Name: "bot-token"}
	token, _ := issuer.IssueLegacy(&corev1.ServiceAccount{ObjectMeta: meta}, &corev1.Secret{ObjectMeta: secretMeta})
	secret := func(labels map[string]string) *corev1.Secret {
		m := secretMeta
		m.Labels = labels
		return &corev1.Secret{ObjectMeta: m, Data: map[string][]byte{corev1.ServiceAccountTokenKey: []byte(token)}}
	}
	listed := &corev1.ServiceAccount{ObjectMeta: meta, Secrets: []corev1.ObjectReference{{Name: "bot-token"}}}
	const legacy = "authentication.k8s.io/legacy-token=system:serviceaccount:team:bot"
	for _, tc := range []struct {
		name   string
		sa     *corev1.ServiceAccount
		secret *corev1.Secret
		want   string
	}{
		{"auto-generated", listed, secret(nil), legacy + ",warning,authentication.k8s.io/legacy-token-autogenerated-secret=bot-token,used bot-token"},
		{"made by hand", &corev1.ServiceAccount{ObjectMeta: meta}, secret(nil), legacy + ",authentication.k8s.io/legacy-token-manual-secret=bot-token,used bot-token"},
		{"marked invalid", listed, secret(map[string]string{LegacyTokenInvalidSinceLabel: "2026-01-01"}),
			legacy + ",authentication.k8s.io/legacy-token-invalidated=bot-token/team,used bot-token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			a := &LegacyAuthenticator{Keys: keys, Audiences: issuer.Audiences, Lookup: true, Tracker: rec,
				Objects: objects{"serviceaccount/team/bot": tc.sa, "secret/team/bot-token": tc.secret}}
			_, _, _, _ = a.AuthenticateToken(context.Background(), token, nil)
			if got := strings.Join(rec.notes, ","); got != tc.want {
				t.Errorf("tracked %s\nwant    %s", got, tc.want)
			}
		})
	}
}
