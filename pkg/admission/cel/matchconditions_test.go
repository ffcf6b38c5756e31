package cel_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// compiler is shared by the tests, as a server shares one.
var compiler = admcel.NewCompiler(admcel.Options{})

func input(r request, authz bool) admcel.Input {
	in := admcel.Input{Attributes: r.attrs, Kind: r.invocationKind(), Resource: r.attrs.Resource, Object: r.object, OldObject: r.oldObject}
	if authz {
		in.Authorizer = fakeAuthorizer
	}
	return in
}

func matchOurs(tc conditionCase, policy *admissionregistrationv1.FailurePolicyType) admcel.MatchResult {
	opts := admcel.CompileOptions{HasAuthorizer: true}
	m := compiler.CompileMatchConditions(tc.matchConditions(), opts, policy)
	return m.Match(context.Background(), input(requests[tc.request](), tc.authorizer))
}

// evalOurs gives each expression's result, or the evaluator's failure.
func evalOurs(tc conditionCase) ([]string, error) {
	var progs []*admcel.Program
	for _, mc := range tc.matchConditions() {
		progs = append(progs, compiler.Compile(mc.Expression, admcel.CompileOptions{HasAuthorizer: true, ResultTypes: boolType}))
	}
	act, err := admcel.NewActivation(input(requests[tc.request](), tc.authorizer))
	if err != nil {
		return nil, err
	}
	results, _, err := admcel.EvalAll(context.Background(), progs, act, admcel.MatchConditionsBudget)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(results))
	for i, r := range results {
		out[i] = describe(r.Value, r.Err)
	}
	return out, nil
}

func describe(v any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprint(v)
}

// TestMatchConditionsGolden records, per case, every expression's result
// and the verdict under each failure policy, in testdata/golden/<case>.txt.
// The differential test checks the same cases against upstream.
func TestMatchConditionsGolden(t *testing.T) {
	for _, tc := range conditionCases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for i, mc := range tc.matchConditions() {
				fmt.Fprintf(&b, "condition %s: %s\n", mc.Name, tc.matchConditions()[i].Expression)
			}
			results, err := evalOurs(tc)
			for i, r := range results {
				fmt.Fprintf(&b, "result %s: %s\n", tc.matchConditions()[i].Name, r)
			}
			if err != nil {
				fmt.Fprintf(&b, "evaluator: %v\n", err)
			}
			for _, fp := range failurePolicies {
				res := matchOurs(tc, fp.policy)
				fmt.Fprintf(&b, "failurePolicy %s: matches=%v failedCondition=%q evalErrors=%d\n", fp.name, res.Matches, res.FailedCondition, res.EvalErrors)
				if res.Err != nil {
					fmt.Fprintf(&b, "  error: %v\n", res.Err)
				}
			}
			golden(t, filepath.Join("testdata", "golden", tc.name+".txt"), b.String())
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// TestMatchVectors checks the cases of upstream's matchConditions matcher
// test (k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/matcher_test.go) by
// their verdicts.
func TestMatchVectors(t *testing.T) {
	const budgetErr = "validation failed due to running out of cost budget, no further validation rules will be run"
	cases := []struct {
		caseName string
		policy   string
		matches  bool
		failed   string
		err      string // substring; empty for none
	}{
		{"single-true", "nil", true, "", ""},                                // 87
		{"two-true", "Fail", true, "", ""},                                  // 88
		{"single-false", "Fail", false, "test1", ""},                        // 89
		{"two-false", "Fail", false, "test1", ""},                           // 90
		{"false-true", "Ignore", false, "test1", ""},                        // 90
		{"true-false-true", "nil", false, "test1", ""},                      // 90
		{"budget-exhausted", "nil", false, "", budgetErr},                   // 91
		{"budget-exhausted", "Fail", false, "", budgetErr},                  // 91
		{"budget-exhausted", "Ignore", false, "", ""},                       // 92
		{"false-beats-errors", "Fail", false, "test1", ""},                  // 93
		{"false-beats-errors", "Ignore", false, "test1", ""},                // 93
		{"errors-and-true", "nil", false, "", "no such key: nosuch"},        // 94
		{"errors-and-true", "Fail", false, "", "no such key: other"},        // 94
		{"errors-and-true", "Ignore", false, "", ""},                        // 95
		{"budget-beats-false", "Fail", false, "", budgetErr},                // an evaluator failure hides results
		{"budget-fitting", "Fail", true, "", ""},                            // 3 x 700k fit in 2.5M
		{"within-per-call-limit", "Fail", true, "", ""},                     // five nested all() fit in 1M
		{"per-call-limit", "Fail", false, "", "actual cost limit exceeded"}, // six do not
	}
	for _, c := range cases {
		tc := findCase(t, c.caseName)
		res := matchOurs(tc, policyNamed(c.policy))
		got := fmt.Sprintf("matches=%v failed=%q", res.Matches, res.FailedCondition)
		want := fmt.Sprintf("matches=%v failed=%q", c.matches, c.failed)
		if got != want || (c.err == "") != (res.Err == nil) || (res.Err != nil && !strings.Contains(res.Err.Error(), c.err)) {
			t.Errorf("Match(%s, failurePolicy %s) = %s err=%v, want %s err containing %q", c.caseName, c.policy, got, res.Err, want, c.err)
		}
	}
}

// TestMatchMessages checks the client-facing messages upstream's matcher
// (k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/matcher.go) produces,
// as observed by running it.
func TestMatchMessages(t *testing.T) {
	cases := []struct{ caseName, want string }{
		{"spec-96-two-errors", "[expression 'object.spec.nodeName == 'x'' resulted in error: no such key: nodeName, expression 'object.nosuch == 1' resulted in error: no such key: nosuch]"},
		{"spec-97-params-undeclared", "compilation error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^"},
		{"duplicate-errors", "expression 'object.nosuch == 1' resulted in error: no such key: nosuch"},
		{"authorizer-unbound", "expression 'authorizer.group('').resource('pods').check('get').allowed()' resulted in error: no such attribute(s): authorizer"},
		{"not-bool", "compilation error: must evaluate to bool but got string"},
		{"typed-missing-key", "expression 'object.metadata.labels['missing-key'] == 'x'' resulted in error: no such key: missing-key"},
	}
	for _, c := range cases {
		res := matchOurs(findCase(t, c.caseName), nil)
		if res.Err == nil || res.Err.Error() != c.want {
			t.Errorf("Match(%s) error = %v, want %q", c.caseName, res.Err, c.want)
		}
	}
}

func findCase(t *testing.T, name string) conditionCase {
	t.Helper()
	for _, tc := range conditionCases {
		if tc.name == name {
			return tc
		}
	}
	t.Fatalf("no case %q", name)
	return conditionCase{}
}

func policyNamed(name string) *admissionregistrationv1.FailurePolicyType {
	for _, fp := range failurePolicies {
		if fp.name == name {
			return fp.policy
		}
	}
	panic("unknown failure policy " + name)
}

// TestMatchInterrupted checks that a cancelled request stops a long
// comprehension.
func TestMatchInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tc := conditionCase{request: "create-pod", conditions: []string{nest5}}
	m := compiler.CompileMatchConditions(tc.matchConditions(), admcel.CompileOptions{}, nil)
	res := m.Match(ctx, input(requests[tc.request](), false))
	if res.Err == nil || !strings.Contains(res.Err.Error(), "operation interrupted") {
		t.Errorf("Match(cancelled context) error = %v, want operation interrupted", res.Err)
	}
}

// TestMatchNoConditions matches trivially.
func TestMatchNoConditions(t *testing.T) {
	m := compiler.CompileMatchConditions(nil, admcel.CompileOptions{}, nil)
	if res := m.Match(context.Background(), admcel.Input{}); !res.Matches || res.Err != nil {
		t.Errorf("Match(no conditions) = %+v, want a match", res)
	}
}
