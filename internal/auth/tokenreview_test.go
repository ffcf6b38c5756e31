package auth

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
)

func TestTokenReviewer(t *testing.T) {
	tokens, err := ParseTokenFile(strings.NewReader("t1,alice,42,dev\nt2,bob,43\n"), "tokens", nil)
	if err != nil {
		t.Fatal(err)
	}
	api := []string{"https://kubernetes.default.svc", "api"}
	failing := AudienceTokenAuthenticatorFunc(func(_ context.Context, token string, _ []string) (authenticationv1.UserInfo, []string, bool, error) {
		if token == "jwt" {
			return authenticationv1.UserInfo{}, nil, false, errors.New("token has expired")
		}
		return authenticationv1.UserInfo{}, nil, false, nil
	})
	r := TokenReviewer(AudienceAgnostic(tokens, api), failing)
	for _, tc := range []struct {
		name, token string
		audiences   []string
		ok          bool
		user        string
		groups      []string
		want        []string
		err         string
	}{
		{name: "api audiences", token: "t1", audiences: api, ok: true, user: "alice", groups: []string{"dev", AllAuthenticated}, want: api},
		{name: "one of them", token: "t2", audiences: []string{"other", "api"}, ok: true, user: "bob", groups: []string{AllAuthenticated}, want: []string{"api"}},
		{name: "no audiences asked", token: "t1", ok: true, user: "alice", groups: []string{"dev", AllAuthenticated}},
		{name: "foreign audience", token: "t1", audiences: []string{"other"}, err: "invalid bearer token"},
		{name: "unknown token", token: "nope", audiences: api, err: "invalid bearer token"},
		{name: "rejected by the second", token: "jwt", audiences: api, err: "token has expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user, auds, ok, err := r.AuthenticateToken(context.Background(), tc.token, tc.audiences)
			if ok != tc.ok || user.Username != tc.user || !slices.Equal(user.Groups, tc.groups) || !slices.Equal(auds, tc.want) {
				t.Errorf("AuthenticateToken(%s, %v) = %v %v %v, want %v %s %v %v", tc.token, tc.audiences, user, auds, ok, tc.ok, tc.user, tc.groups, tc.want)
			}
			if got := errString(err); got != tc.err {
				t.Errorf("AuthenticateToken(%s, %v) error = %q, want %q", tc.token, tc.audiences, got, tc.err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
