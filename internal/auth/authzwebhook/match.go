package authzwebhook

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// MatchConditions are CEL expressions over the SubjectAccessReview spec
// about to be sent, as the variable request: the webhook is asked only
// when all are true (--authorization-config's matchConditions).
type MatchConditions struct {
	programs []matchProgram
}

type matchProgram struct {
	expression string
	program    cel.Program
}

// CompileMatchCondition compiles one expression; the error says why it is
// invalid (it must be CEL over request and evaluate to a bool).
func CompileMatchCondition(expression string) (cel.Program, error) {
	env, err := matchEnv()
	if err != nil {
		return nil, fmt.Errorf("unexpected error loading CEL environment: %w", err)
	}
	ast, issues := env.Compile(expression)
	if issues != nil && issues.Err() != nil {
		return nil, fmt.Errorf("compilation failed: %s", issues.String())
	}
	if ast.OutputType() != cel.BoolType {
		return nil, fmt.Errorf("must evaluate to bool but got %v", ast.OutputType())
	}
	return env.Program(ast)
}

// NewMatchConditions compiles expressions; nil when there are none.
func NewMatchConditions(expressions []string) (*MatchConditions, error) {
	if len(expressions) == 0 {
		return nil, nil
	}
	m := &MatchConditions{}
	for _, e := range expressions {
		p, err := CompileMatchCondition(e)
		if err != nil {
			return nil, fmt.Errorf("matchCondition %q: %w", e, err)
		}
		m.programs = append(m.programs, matchProgram{expression: e, program: p})
	}
	return m, nil
}

// Match reports whether every condition holds for spec. A condition that
// is false decides at once; errors are returned only when none is false,
// as upstream.
func (m *MatchConditions) Match(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, error) {
	match, _, err := m.eval(ctx, spec)
	return match, err
}

// eval is Match that also reports whether any condition evaluated so far
// failed, even when a later false one decided.
func (m *MatchConditions) eval(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (match, errored bool, err error) {
	if m == nil {
		return true, false, nil
	}
	vars := map[string]any{"request": requestValue(spec)}
	var errs []error
	for _, p := range m.programs {
		out, _, err := p.program.ContextEval(ctx, vars)
		if err != nil {
			errs = append(errs, fmt.Errorf("cel evaluation error: expression '%s' resulted in error: %w", p.expression, err))
			continue
		}
		match, ok := out.Value().(bool)
		if !ok {
			errs = append(errs, fmt.Errorf("cel evaluation error: expression '%s' eval result type should be bool but got %v", p.expression, out.Type()))
			continue
		}
		if !match {
			return false, len(errs) > 0, nil
		}
	}
	return len(errs) == 0, len(errs) > 0, errors.Join(errs...)
}

var (
	matchEnvOnce sync.Once
	matchEnvSet  *cel.Env
	matchEnvErr  error
)

// matchEnv is the Kubernetes base environment with request declared.
func matchEnv() (*cel.Env, error) {
	matchEnvOnce.Do(func() {
		request := requestType()
		set, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions:        []cel.EnvOption{cel.Variable("request", request.CelType())},
			DeclTypes:         []*apiservercel.DeclType{request},
		})
		if err != nil {
			matchEnvErr = err
			return
		}
		matchEnvSet, matchEnvErr = set.Env(environment.StoredExpressions)
	})
	return matchEnvSet, matchEnvErr
}
