package cli

import (
	"strings"
	"testing"
)

func TestAuthorizationConfigExclusive(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--authorization-config=/a.yaml"}, ""},
		{[]string{"--authorization-mode=RBAC"}, ""},
		{[]string{"--authorization-config=/a.yaml", "--authorization-mode=RBAC"}, "--authorization-config can not be specified when"},
		{[]string{"--authorization-config=/a.yaml", "--authorization-webhook-cache-authorized-ttl=1m"}, "--authorization-config can not be specified when"},
	} {
		f := newServeCommand().Flags()
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := checkAuthorizationFlags(f); err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("checkAuthorizationFlags(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
