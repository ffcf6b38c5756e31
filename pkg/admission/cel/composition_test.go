package cel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

func TestComposition(t *testing.T) {
	vars := []admcel.Variable{
		{Name: "name", Expression: "object.metadata.name"},
		{Name: "greeting", Expression: "'hello ' + variables.name"},
		{Name: "forward", Expression: "variables.later + 1"},
		{Name: "later", Expression: "1"},
		{Name: "broken", Expression: "object.metadata.nope"},
		{Name: "costly", Expression: nest5},
	}
	c := admcel.NewCompiler(admcel.Options{}).Compose(vars, admcel.CompileOptions{HasAuthorizer: true})
	cases := []struct {
		expr, want, wantErr string
	}{
		{expr: "variables.greeting", want: "hello my-pod"},
		{expr: "variables.later + variables.later", want: "2"},
		{expr: "variables.forward", wantErr: `composited variable "forward" fails to compile: compilation failed: ERROR: <input>:1:10: undefined field 'later'`},
		{expr: "variables.broken", wantErr: `composited variable "broken" fails to evaluate: no such key: nope`},
		{expr: "variables.name == 'my-pod' || variables.broken == 'x'", want: "true"},
		{expr: "variables.undeclared", wantErr: "undefined field 'undeclared'"},
	}
	req := requests["create-pod"]()
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			p := c.Compile(tc.expr, admcel.CompileOptions{HasAuthorizer: true})
			act, err := c.NewActivation(context.Background(), admcel.Input{Attributes: req.attrs, Object: req.object})
			if err != nil {
				t.Fatal(err)
			}
			res, _, err := p.Eval(context.Background(), act, admcel.RuntimeBudget)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantErr != "":
				if res.Err == nil || !strings.Contains(res.Err.Error(), tc.wantErr) {
					t.Errorf("Eval(%s) error = %v, want one containing %q", tc.expr, res.Err, tc.wantErr)
				}
			case res.Err != nil:
				t.Errorf("Eval(%s) = %v, want %s", tc.expr, res.Err, tc.want)
			case res.Value.ConvertToType(types.StringType).Value() != tc.want:
				t.Errorf("Eval(%s) = %v, want %s", tc.expr, res.Value, tc.want)
			}
		})
	}
}

// TestVariableCostChargedToFirstUser checks a variable's cost is charged
// once per activation, to the expression that first reads it.
func TestVariableCostChargedToFirstUser(t *testing.T) {
	c := admcel.NewCompiler(admcel.Options{}).Compose([]admcel.Variable{{Name: "costly", Expression: nest5}}, admcel.CompileOptions{})
	req := requests["create-pod"]()
	act, err := c.NewActivation(context.Background(), admcel.Input{Attributes: req.attrs, Object: req.object})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Compile("variables.costly", admcel.CompileOptions{})
	_, first, err := p.Eval(context.Background(), act, admcel.RuntimeBudget)
	if err != nil {
		t.Fatal(err)
	}
	_, second, err := p.Eval(context.Background(), act, first)
	if err != nil {
		t.Fatal(err)
	}
	if spent := admcel.RuntimeBudget - first; spent < 100_000 {
		t.Errorf("first use cost %d, want the variable's cost (>100000)", spent)
	}
	if spent := first - second; spent > 10 {
		t.Errorf("second use cost %d, want only the field access", spent)
	}
	if _, _, err := p.Eval(context.Background(), mustActivation(t, c, req), 1000); err == nil ||
		!strings.Contains(err.Error(), "running out of cost budget") {
		t.Errorf("Eval with a small budget = %v, want the budget error", err)
	}
}

func mustActivation(t *testing.T, c *admcel.Composition, req request) *admcel.Activation {
	t.Helper()
	act, err := c.NewActivation(context.Background(), admcel.Input{Attributes: req.attrs, Object: req.object})
	if err != nil {
		t.Fatal(err)
	}
	return act
}

func TestCachingAuthorizer(t *testing.T) {
	calls := 0
	inner := admission.AuthorizerFunc(func(_ context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
		calls++
		return admission.AuthorizationAllow, a.Resource, nil
	})
	c := admcel.NewCachingAuthorizer(inner)
	for _, res := range []string{"pods", "pods", "secrets", "pods"} {
		d, reason, _ := c.Authorize(context.Background(), admission.AuthorizationAttributes{Verb: "get", Resource: res, ResourceRequest: true})
		if d != admission.AuthorizationAllow || reason != res {
			t.Errorf("Authorize(%s) = %v %q", res, d, reason)
		}
	}
	if calls != 2 {
		t.Errorf("inner authorizer called %d times, want 2", calls)
	}
	if admcel.NewCachingAuthorizer(nil) != nil {
		t.Error("NewCachingAuthorizer(nil) != nil")
	}
}
