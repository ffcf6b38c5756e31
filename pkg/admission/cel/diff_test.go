package cel_test

import (
	"context"
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	upadmission "k8s.io/apiserver/pkg/admission"
	upcel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"

	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

// This file is the differential test: every case of cases_test.go runs
// through upstream's own matchConditions code (plugin/cel and
// webhook/matchconditions of k8s.io/apiserver v0.37.2, compiled the way the
// webhook plugin compiles them) and through ours; results, verdicts and
// messages must be identical.

var upCompiler = upcel.NewConditionCompiler(environment.MustBaseEnvSet(version.MajorMinor(1, 36)))

// upAuthorizer is authorizeFake as upstream's authorizer.
type upAuthorizer struct{}

func (upAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	fr, ferr := a.GetFieldSelector()
	_, lerr := a.GetLabelSelector()
	d, reason, err := authorizeFake(a.GetUser().GetName(), a.GetVerb(), a.GetAPIGroup(), a.GetResource(), a.GetSubresource(),
		a.GetNamespace(), a.GetName(), a.GetPath(), len(fr), ferr, lerr)
	return authorizer.Decision(d), reason, err
}

// upVersioned is the request as upstream's webhook dispatcher hands it to
// the matcher.
func upVersioned(r request) *upadmission.VersionedAttributes {
	a := r.attrs
	u := &user.DefaultInfo{Name: a.UserInfo.Username, UID: a.UserInfo.UID, Groups: a.UserInfo.Groups}
	if len(a.UserInfo.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range a.UserInfo.Extra {
			u.Extra[k] = v
		}
	}
	attrs := upadmission.NewAttributesRecord(a.Object, a.OldObject, a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
		upadmission.Operation(a.Operation), a.Options, a.DryRun, u)
	return &upadmission.VersionedAttributes{Attributes: attrs, VersionedKind: r.invocationKind(),
		VersionedObject: upadmission.NewLazyObject(r.object), VersionedOldObject: upadmission.NewLazyObject(r.oldObject)}
}

func upAccessors(tc conditionCase) []upcel.ExpressionAccessor {
	var out []upcel.ExpressionAccessor
	for _, mc := range tc.matchConditions() {
		out = append(out, &matchconditions.MatchCondition{Name: mc.Name, Expression: mc.Expression})
	}
	return out
}

func upCondition(tc conditionCase) upcel.ConditionEvaluator {
	return upCompiler.CompileCondition(upAccessors(tc), upcel.OptionalVariableDeclarations{HasAuthorizer: true}, environment.StoredExpressions)
}

func upAuthz(tc conditionCase) authorizer.UnconditionalAuthorizer {
	if tc.authorizer {
		return upAuthorizer{}
	}
	return nil
}

// evalUpstream gives each expression's result as upstream computes it.
func evalUpstream(tc conditionCase) ([]string, error) {
	r := requests[tc.request]()
	va := upVersioned(r)
	// The request's own resource with the invocation kind, as upstream's
	// matcher passes them.
	req := upcel.CreateAdmissionRequest(va.Attributes, metav1.GroupVersionResource(va.GetResource()), metav1.GroupVersionKind(va.VersionedKind))
	results, _, err := upCondition(tc).ForInput(context.Background(), va, req,
		upcel.OptionalVariableBindings{Authorizer: upAuthz(tc)}, nil, admcel.MatchConditionsBudget)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(results))
	for i, res := range results {
		out[i] = describe(res.EvalResult, res.Error)
	}
	return out, nil
}

func matchUpstream(tc conditionCase, policy *admissionregistrationv1.FailurePolicyType) matchconditions.MatchResult {
	m := matchconditions.NewMatcher(upCondition(tc), policy, "webhook", "validating", "w")
	return m.Match(context.Background(), upVersioned(requests[tc.request]()), nil, upAuthz(tc))
}

func TestDifferentialExpressionResults(t *testing.T) {
	if testing.Short() {
		t.Skip("differential run against upstream's plugins: covered by the full (non -short) test run")
	}
	for _, tc := range conditionCases {
		t.Run(tc.name, func(t *testing.T) {
			got, gotErr := evalOurs(tc)
			want, wantErr := evalUpstream(tc)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("evaluator error = %v, upstream %v", gotErr, wantErr)
			}
			if len(got) != len(want) {
				t.Fatalf("%d results, upstream %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("condition %d %q = %s, upstream %s", i, tc.matchConditions()[i].Expression, got[i], want[i])
				}
			}
		})
	}
}

func TestDifferentialMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("differential run against upstream's plugins: covered by the full (non -short) test run")
	}
	for _, tc := range conditionCases {
		for _, fp := range failurePolicies {
			t.Run(tc.name+"/"+fp.name, func(t *testing.T) {
				got := matchOurs(tc, fp.policy)
				want := matchUpstream(tc, fp.policy)
				if got.Matches != want.Matches || got.FailedCondition != want.FailedConditionName || fmt.Sprint(got.Err) != fmt.Sprint(want.Error) {
					t.Errorf("Match = {%v %q %v}, upstream {%v %q %v}", got.Matches, got.FailedCondition, got.Err,
						want.Matches, want.FailedConditionName, want.Error)
				}
			})
		}
	}
}
