package cel_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/cel-go/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

var boolType = []*cel.Type{cel.BoolType}

// TestLimitsAreUpstreams guards the copied constants.
func TestLimitsAreUpstreams(t *testing.T) {
	if admcel.PerCallLimit != celconfig.PerCallLimit || admcel.RuntimeBudget != celconfig.RuntimeCELCostBudget ||
		admcel.MatchConditionsBudget != celconfig.RuntimeCELCostBudgetMatchConditions {
		t.Errorf("limits %d/%d/%d differ from upstream %d/%d/%d", admcel.PerCallLimit, admcel.RuntimeBudget, admcel.MatchConditionsBudget,
			celconfig.PerCallLimit, celconfig.RuntimeCELCostBudget, celconfig.RuntimeCELCostBudgetMatchConditions)
	}
}

func TestCompileCaches(t *testing.T) {
	c := admcel.NewCompiler(admcel.Options{})
	opts := admcel.CompileOptions{HasAuthorizer: true, ResultTypes: boolType}
	var wg sync.WaitGroup
	progs := make([]*admcel.Program, 8)
	for i := range progs {
		wg.Go(func() { progs[i] = c.Compile("object.metadata.name == 'x'", opts) })
	}
	wg.Wait()
	for i, p := range progs {
		if p != progs[0] {
			t.Fatalf("Compile #%d returned another program: compiled twice", i)
		}
	}
	if p := c.Compile("object.metadata.name == 'x'", admcel.CompileOptions{HasAuthorizer: true}); p == progs[0] {
		t.Errorf("Compile with other result types returned the cached program")
	}
	if p := c.Compile("object.metadata.name == 'x'", admcel.CompileOptions{ResultTypes: boolType}); p == progs[0] {
		t.Errorf("Compile with other declarations returned the cached program")
	}
}

func TestCompile(t *testing.T) {
	cases := []struct {
		name string
		expr string
		opts admcel.CompileOptions
		err  string // prefix of the error; empty for none
	}{
		{"stored has lists v1", "[1, 2, 3].includes(2)", admcel.CompileOptions{}, ""},
		{"new expressions at 1.36 lack lists v1", "[1, 2, 3].includes(2)", admcel.CompileOptions{NewExpressions: true},
			"compilation failed: ERROR: <input>:1:19: undeclared reference to 'includes'"},
		{"params declared", "params.x == 1", admcel.CompileOptions{HasParams: true, ResultTypes: boolType}, ""},
		{"params undeclared", "params.x == 1", admcel.CompileOptions{}, "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params'"},
		{"authorizer undeclared", "authorizer.path('/').check('get').allowed()", admcel.CompileOptions{},
			"compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer'"},
		{"namespaceObject typed", "namespaceObject.metadata.uid == ''", admcel.CompileOptions{},
			"compilation failed: ERROR: <input>:1:25: undefined field 'uid'"},
		{"one of result types", "1", admcel.CompileOptions{ResultTypes: []*cel.Type{cel.StringType, cel.NullType}},
			"must evaluate to one of [string null_type] but got int"},
		{"any result", "1", admcel.CompileOptions{}, ""},
		{"patch types", "jsonpatch.escapeKey('a/b') == 'a~1b'", admcel.CompileOptions{HasPatchTypes: true}, ""},
		{"bad literal regex", "'x'.find('[') == ''", admcel.CompileOptions{}, "program instantiation failed: error parsing regexp"},
	}
	c := admcel.NewCompiler(admcel.Options{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Compile(tc.expr, tc.opts).Err()
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("Compile(%q) = %v, want no error", tc.expr, err)
			case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
				t.Errorf("Compile(%q) = %v, want an error starting %q", tc.expr, err, tc.err)
			}
		})
	}
}
