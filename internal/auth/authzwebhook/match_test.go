package authzwebhook

import (
	"context"
	"testing"

	"github.com/admitd/admitd/internal/auth"
)

func TestMatchConditions(t *testing.T) {
	tests := []struct {
		name      string
		exprs     []string
		attrs     auth.Attributes
		want      auth.Decision
		wantErr   bool
		wantCalls int
	}{
		{"all true", []string{"request.user == 'alice'", "'dev' in request.groups"}, podGet, auth.DecisionAllow, false, 1},
		{"one false", []string{"request.user == 'alice'", "request.resourceAttributes.resource == 'secrets'"}, podGet, auth.DecisionNoOpinion, false, 0},
		{"non-resource skipped", []string{"has(request.resourceAttributes)"}, auth.Attributes{Verb: "get", Path: "/healthz"}, auth.DecisionNoOpinion, false, 0},
		{"extra", []string{"request.extra['scopes'][0] == 'a'"}, podGet, auth.DecisionAllow, false, 1},
		{"error", []string{"request.nonResourceAttributes.path == '/'"}, podGet, auth.DecisionNoOpinion, true, 0},
		{"false beats error", []string{"request.nonResourceAttributes.path == '/'", "false"}, podGet, auth.DecisionNoOpinion, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startRemote(t, func(map[string]any) (int, any) { return status(true, false, "") })
			o := testOptions()
			m, err := NewMatchConditions(tt.exprs)
			if err != nil {
				t.Fatal(err)
			}
			o.MatchConditions = m
			w := newTestAuthorizer(t, r, o)
			d, _, err := w.Authorize(context.Background(), tt.attrs)
			if d != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("Authorize = %v, %v; want %v, error %v", d, err, tt.want, tt.wantErr)
			}
			if got := r.calls(); got != tt.wantCalls {
				t.Errorf("calls = %d, want %d", got, tt.wantCalls)
			}
		})
	}
}

func TestMatchConditionErrorDenies(t *testing.T) {
	r := startRemote(t, func(map[string]any) (int, any) { return status(true, false, "") })
	o := testOptions()
	o.DecisionOnError = auth.DecisionDeny
	o.MatchConditions, _ = NewMatchConditions([]string{"request.nonResourceAttributes.path == '/'"})
	w := newTestAuthorizer(t, r, o)
	if d, _, err := w.Authorize(context.Background(), podGet); d != auth.DecisionDeny || err == nil {
		t.Errorf("Authorize = %v, %v; want Deny with an error (failurePolicy Deny)", d, err)
	}
}

func TestCompileMatchCondition(t *testing.T) {
	for _, tc := range []struct {
		expr string
		ok   bool
	}{
		{"request.user == 'a'", true},
		{"has(request.resourceAttributes.fieldSelector) && request.resourceAttributes.fieldSelector.requirements.size() > 0", true},
		{"request.user", false},
		{"request.nope == 'a'", false},
		{"object.metadata.name == 'a'", false},
		{"(", false},
	} {
		if _, err := CompileMatchCondition(tc.expr); (err == nil) != tc.ok {
			t.Errorf("CompileMatchCondition(%q) = %v, want ok %v", tc.expr, err, tc.ok)
		}
	}
}
