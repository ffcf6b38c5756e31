package auth

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestAuthenticationMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewAuthenticationMetrics(reg)
	for _, a := range []struct {
		user string
		ok   bool
		err  error
	}{
		{"admin", true, nil}, {"kubelet", true, nil}, {"alice@example.com", true, nil}, {"system:serviceaccount:kube-system:default", true, nil},
		{"system:serviceaccount:kube-system:job-controller", true, nil}, {"admin-ish", true, nil},
		{"", false, nil}, {"", false, errors.New("invalid bearer token")},
	} {
		m.Observe(ResultOf(a.ok, a.err), a.user, 0)
	}
	want := `
# HELP authenticated_user_requests [ALPHA] Counter of authenticated requests broken out by username.
# TYPE authenticated_user_requests counter
authenticated_user_requests{username="admin"} 1
authenticated_user_requests{username="email_id"} 1
authenticated_user_requests{username="kubelet"} 1
authenticated_user_requests{username="other"} 2
authenticated_user_requests{username="system:serviceaccount:kube-system:default"} 1
# HELP authentication_attempts [ALPHA] Counter of authenticated attempts.
# TYPE authentication_attempts counter
authentication_attempts{result="error"} 1
authentication_attempts{result="failure"} 1
authentication_attempts{result="success"} 6
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "authenticated_user_requests", "authentication_attempts"); err != nil {
		t.Error(err)
	}
	var none *AuthenticationMetrics
	none.Observe(AuthenticationSuccess, "admin", 0) // counts nothing, does not panic
}

func BenchmarkAuthenticationMetricsObserve(b *testing.B) {
	m := NewAuthenticationMetrics(prometheus.NewRegistry())
	b.ReportAllocs()
	for b.Loop() {
		m.Observe(AuthenticationSuccess, "system:serviceaccount:kube-system:job-controller", 0)
	}
}
