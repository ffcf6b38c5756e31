package auth

import (
	"context"
	"errors"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
)

func TestTokenUnion(t *testing.T) {
	file, err := ParseTokenFile(strings.NewReader("t1,alice,1\n"), "tokens", nil)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	sa := AudienceTokenAuthenticatorFunc(func(_ context.Context, token string, auds []string) (authenticationv1.UserInfo, []string, bool, error) {
		asked = auds
		switch token {
		case "jwt":
			return authenticationv1.UserInfo{Username: "system:serviceaccount:a:b"}, []string{"api"}, true, nil
		case "expired":
			return authenticationv1.UserInfo{}, nil, false, errors.New("service account token has expired")
		}
		return authenticationv1.UserInfo{}, nil, false, nil
	})
	u := TokenUnion(file, ForAPIAudiences(sa))
	for _, tc := range []struct {
		token, user, err string
		ok               bool
	}{
		{token: "t1", user: "alice", ok: true},
		{token: "jwt", user: "system:serviceaccount:a:b", ok: true},
		{token: "expired", err: "service account token has expired"},
		{token: "unknown"},
	} {
		user, ok, err := u.AuthenticateToken(context.Background(), tc.token)
		if ok != tc.ok || user.Username != tc.user || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("AuthenticateToken(%s) = %q, %v, %v; want %q, %v, %q", tc.token, user.Username, ok, err, tc.user, tc.ok, tc.err)
		}
	}
	if asked != nil {
		t.Errorf("ForAPIAudiences asked for %v, want no audiences (the API server's own)", asked)
	}
}
