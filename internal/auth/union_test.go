package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	authenticationv1 "k8s.io/api/authentication/v1"
)

func fixed(d Decision, reason string, err error) Authorizer {
	return AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) { return d, reason, err })
}

func named(typ, name string, a Authorizer) Named { return Named{Type: typ, Name: name, Authorizer: a} }

func TestAuthorizerUnion(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name       string
		union      AuthorizerUnion
		want       Decision
		wantReason string
		wantErr    bool
	}{
		{"empty", nil, DecisionNoOpinion, "", false},
		{"first allow wins", AuthorizerUnion{named("A", "a", fixed(DecisionAllow, "yes", nil)), named("B", "b", fixed(DecisionDeny, "no", nil))}, DecisionAllow, "yes", false},
		{"deny stops", AuthorizerUnion{named("A", "a", fixed(DecisionDeny, "no", nil)), named("B", "b", fixed(DecisionAllow, "yes", nil))}, DecisionDeny, "no", false},
		{"no opinion continues", AuthorizerUnion{named("A", "a", fixed(DecisionNoOpinion, "dunno", nil)), named("B", "b", fixed(DecisionAllow, "yes", nil))}, DecisionAllow, "yes", false},
		{"reasons collected", AuthorizerUnion{named("A", "a", fixed(DecisionNoOpinion, "dunno", nil)), named("B", "b", fixed(DecisionNoOpinion, "", boom)), named("C", "c", fixed(DecisionNoOpinion, "nope", nil))},
			DecisionNoOpinion, "a: dunno\nc: nope", true},
		{"always deny", AuthorizerUnion{named(ModeAlwaysDeny, "alwaysdeny", AlwaysDeny)}, DecisionNoOpinion, "alwaysdeny: Everything is forbidden.", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, err := tc.union.Authorize(context.Background(), Attributes{})
			if d != tc.want || reason != tc.wantReason || (err != nil) != tc.wantErr {
				t.Errorf("Authorize = %v, %q, %v; want %v, %q, error %v", d, reason, err, tc.want, tc.wantReason, tc.wantErr)
			}
		})
	}
}

func TestPrivilegedGroups(t *testing.T) {
	a := PrivilegedGroups("system:masters")
	for _, tc := range []struct {
		groups []string
		want   Decision
	}{
		{[]string{"system:authenticated", "system:masters"}, DecisionAllow},
		{[]string{"system:authenticated"}, DecisionNoOpinion},
		{nil, DecisionNoOpinion},
	} {
		d, _, _ := a.Authorize(context.Background(), Attributes{User: authenticationv1.UserInfo{Username: "u", Groups: tc.groups}})
		if d != tc.want {
			t.Errorf("PrivilegedGroups(system:masters) for groups %v = %v, want %v", tc.groups, d, tc.want)
		}
	}
}

func TestValidateModes(t *testing.T) {
	for _, tc := range []struct {
		modes []string
		want  string
	}{
		{[]string{"RBAC"}, ""},
		{[]string{"AlwaysAllow", "RBAC", "AlwaysDeny"}, ""},
		{[]string{"TotallyBogus"}, `authorization-mode "TotallyBogus" is not a valid mode`},
		{nil, "at least one authorization-mode must be passed"},
		{[]string{"RBAC", "RBAC"}, `authorization-mode ["RBAC" "RBAC"] has mode specified more than once`},
		{[]string{"Bogus", "RBAC", "RBAC"}, `[authorization-mode "Bogus" is not a valid mode, authorization-mode ["Bogus" "RBAC" "RBAC"] has mode specified more than once]`},
		{[]string{"Node", "RBAC"}, ""},
		{[]string{"Node", "Webhook"}, ""},
		{[]string{"Node", "ABAC"}, "authorization-mode ABAC is not implemented by admitd yet (available: AlwaysAllow, AlwaysDeny, Node, RBAC, Webhook)"},
	} {
		err := ValidateModes(tc.modes)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("ValidateModes(%q) = %q, want %q", tc.modes, got, tc.want)
		}
	}
}

func TestDecisionMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewDecisionMetrics(reg)
	allow := m.Instrument(named("RBAC", "rbac", fixed(DecisionAllow, "", nil)))
	none := m.Instrument(named("RBAC", "rbac", fixed(DecisionNoOpinion, "", nil)))
	deny := m.Instrument(named("Webhook", "webhook", fixed(DecisionDeny, "", nil)))
	for _, n := range []Named{allow, allow, none, deny} {
		_, _, _ = n.Authorize(context.Background(), Attributes{})
	}
	for _, tc := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"RBAC", "rbac", "allowed"}, 2},
		{[]string{"RBAC", "rbac", "denied"}, 0},
		{[]string{"Webhook", "webhook", "denied"}, 1},
	} {
		if got := testutil.ToFloat64(m.decisions.WithLabelValues(tc.labels...)); got != tc.want {
			t.Errorf("decisions_total%v = %v, want %v", tc.labels, got, tc.want)
		}
	}
}

// The union lists the rules of its members that list them, through the
// metrics wrapper too; the system:masters authorizer lists none.
func TestAuthorizerUnionRulesReview(t *testing.T) {
	m := NewDecisionMetrics(prometheus.NewRegistry())
	u := AuthorizerUnion{
		named("", "kubernetes.io/system-privileged-group", PrivilegedGroups("system:masters")),
		m.Instrument(named(ModeAlwaysDeny, "alwaysdeny", AlwaysDeny)),
		m.Instrument(named(ModeAlwaysAllow, "alwaysallow", AlwaysAllow)),
	}
	res, non, incomplete, err := u.RulesReview(authenticationv1.UserInfo{Username: "u"}, "ns")
	if len(res) != 1 || res[0].Verbs[0] != "*" || len(non) != 1 || non[0].NonResourceURLs[0] != "*" || incomplete || err != nil {
		t.Errorf("RulesReview = %v, %v, %v, %v; want AlwaysAllow's * rules only", res, non, incomplete, err)
	}
	res, non, _, _ = AuthorizerUnion{named(ModeAlwaysDeny, "alwaysdeny", AlwaysDeny)}.RulesReview(authenticationv1.UserInfo{}, "")
	if len(res) != 0 || len(non) != 0 {
		t.Errorf("AlwaysDeny's RulesReview = %v, %v; want none", res, non)
	}
}
