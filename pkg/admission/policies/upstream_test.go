package policies_test

import (
	"context"
	"sort"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/admitd/admitd/pkg/apis/admissionregistration"
)

// This file is the oracle of the differential test: the genuine upstream
// dispatchers of k8s.io/apiserver v0.37.2 (test code only), fed the same
// golden cases. Policies are compiled as upstream's unexported
// compilePolicy functions do.

// upstreamCompileValidating compiles a ValidatingAdmissionPolicy with the
// upstream CEL plugin, as validating.compilePolicy does.
func upstreamCompileValidating(p *admissionregistrationv1.ValidatingAdmissionPolicy) validating.Validator {
	hasParam := p.Spec.ParamKind != nil
	withAuthz := plugincel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: true}
	noAuthz := plugincel.OptionalVariableDeclarations{HasParams: hasParam}
	c, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, p.Spec.FailurePolicy, err)
	}
	var vars []plugincel.NamedExpressionAccessor
	for _, v := range p.Spec.Variables {
		vars = append(vars, &validating.Variable{Name: v.Name, Expression: v.Expression})
	}
	c.CompileAndStoreVariables(vars, withAuthz, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if len(p.Spec.MatchConditions) > 0 {
		var mcs []plugincel.ExpressionAccessor
		for i := range p.Spec.MatchConditions {
			mcs = append(mcs, (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i]))
		}
		matcher = matchconditions.NewMatcher(c.CompileCondition(mcs, withAuthz, environment.StoredExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	vals := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	msgs := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		vals[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			msgs[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	audits := make([]plugincel.ExpressionAccessor, len(p.Spec.AuditAnnotations))
	for i, a := range p.Spec.AuditAnnotations {
		audits[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return validating.NewValidator(c.CompileCondition(vals, withAuthz, environment.StoredExpressions), matcher,
		c.CompileCondition(audits, withAuthz, environment.StoredExpressions),
		c.CompileCondition(msgs, noAuthz, environment.StoredExpressions), p.Spec.FailurePolicy, nil)
}

// upstreamCompileMutating compiles a MutatingAdmissionPolicy as
// mutating.compilePolicy does.
func upstreamCompileMutating(p *admissionregistrationv1.MutatingAdmissionPolicy) mutating.PolicyEvaluator {
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	c, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return mutating.PolicyEvaluator{Error: err}
	}
	var vars []plugincel.NamedExpressionAccessor
	for _, v := range p.Spec.Variables {
		vars = append(vars, &validating.Variable{Name: v.Name, Expression: v.Expression})
	}
	c.CompileAndStoreVariables(vars, opts, environment.StoredExpressions)
	ev := mutating.PolicyEvaluator{CompositedCompiler: c}
	if len(p.Spec.MatchConditions) > 0 {
		var mcs []plugincel.ExpressionAccessor
		for i := range p.Spec.MatchConditions {
			mcs = append(mcs, (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i]))
		}
		ev.Matcher = matchconditions.NewMatcher(c.CompileCondition(mcs, opts, environment.StoredExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	patchOpts := opts
	patchOpts.HasPatchTypes = true
	for _, m := range p.Spec.Mutations {
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			ev.Mutators = append(ev.Mutators, patch.NewJSONPatcher(c.CompileMutatingEvaluator(
				&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, patchOpts, environment.StoredExpressions)))
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			ev.Mutators = append(ev.Mutators, patch.NewApplyConfigurationPatcher(c.CompileMutatingEvaluator(
				&patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, patchOpts, environment.StoredExpressions)))
		}
	}
	return ev
}

// upstreamAuthorizer adapts the tests' authorizer.
type upstreamAuthorizer struct{}

func (upstreamAuthorizer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetResource() == "secrets" && a.GetUser().GetName() == "eve" {
		return authorizer.DecisionDeny, "secrets are forbidden", nil
	}
	return authorizer.DecisionAllow, "", nil
}

// capturingAttributes keeps the audit annotations upstream adds.
type capturingAttributes struct {
	admission.Attributes
	annotations map[string]string
}

func (c *capturingAttributes) AddAnnotation(k, v string) error {
	if c.annotations == nil {
		c.annotations = map[string]string{}
	}
	if _, ok := c.annotations[k]; !ok {
		c.annotations[k] = v
	}
	return nil
}

type warnings []string

func (w *warnings) AddWarning(_, text string) { *w = append(*w, text) }

// upstreamEnv is what the upstream dispatchers read: informers over a fake
// clientset holding the case's namespaces and ConfigMap params.
type upstreamEnv struct {
	client  *fake.Clientset
	matcher *matching.Matcher
	params  informers.GenericInformer
}

func newUpstreamEnv(t *testing.T, objs []runtime.Object) *upstreamEnv {
	client := fake.NewSimpleClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	ns := factory.Core().V1().Namespaces()
	params, err := factory.ForResource(corev1.SchemeGroupVersion.WithResource("configmaps"))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	return &upstreamEnv{client: client, matcher: matching.NewMatcher(ns.Lister(), client), params: params}
}

func byName[T interface{ GetName() string }](list []T) []T {
	out := append([]T(nil), list...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

func validatingHooks(env *upstreamEnv, ps []*admissionregistrationv1.ValidatingAdmissionPolicy, bs []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) []validating.PolicyHook {
	var hooks []validating.PolicyHook
	for _, p := range byName(ps) {
		h := validating.PolicyHook{Policy: p, Evaluator: upstreamCompileValidating(p), ParamScope: meta.RESTScopeNamespace}
		if p.Spec.ParamKind != nil {
			h.ParamInformer = env.params
		}
		for _, b := range byName(bs) {
			if b.Spec.PolicyName == p.Name {
				h.Bindings = append(h.Bindings, b)
			}
		}
		if len(h.Bindings) > 0 {
			hooks = append(hooks, h)
		}
	}
	return hooks
}

func mutatingHooks(env *upstreamEnv, ps []*admissionregistrationv1.MutatingAdmissionPolicy, bs []*admissionregistrationv1.MutatingAdmissionPolicyBinding) []mutating.PolicyHook {
	var hooks []mutating.PolicyHook
	for _, p := range byName(ps) {
		h := mutating.PolicyHook{Policy: p, Evaluator: upstreamCompileMutating(p), ParamScope: meta.RESTScopeNamespace}
		if p.Spec.ParamKind != nil {
			h.ParamInformer = env.params
		}
		for _, b := range byName(bs) {
			if b.Spec.PolicyName == p.Name {
				h.Bindings = append(h.Bindings, b)
			}
		}
		if len(h.Bindings) > 0 {
			hooks = append(hooks, h)
		}
	}
	return hooks
}

// runUpstream runs a case through upstream's mutating dispatcher (twice
// when it asks for reinvocation, as the chain's reinvoker) and then its
// validating dispatcher.
func runUpstream(t *testing.T, c *goldenCase) goldenResult {
	var objs []runtime.Object
	snap := &policiesSnapshot{}
	for _, raw := range c.Objects {
		obj := decode(t, raw)
		if !snap.add(obj, !c.NoDefaults) {
			// A real informer's typed objects have no apiVersion and kind.
			obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			objs = append(objs, obj)
		}
	}
	env := newUpstreamEnv(t, objs)
	r := c.Request
	ours := r.attributes(t)
	u := ours.UserInfo
	extra := map[string][]string{}
	for k, v := range u.Extra {
		extra[k] = v
	}
	a := &capturingAttributes{Attributes: admission.NewAttributesRecord(ours.Object, ours.OldObject, ours.Kind, ours.Namespace,
		ours.Name, ours.Resource, ours.Subresource, admission.Operation(ours.Operation), ours.Options, ours.DryRun,
		&user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra})}
	var ws warnings
	ctx := warning.WithWarningRecorder(context.Background(), &ws)
	o := admission.NewObjectInterfacesFromScheme(clientgoscheme.Scheme)
	err := func() error {
		if mhooks := mutatingHooks(env, snap.mp, snap.mb); len(mhooks) > 0 && a.GetOperation() != admission.Delete {
			tcm := patch.NewTypeConverterManager(applyconfigurations.NewTypeConverter(clientgoscheme.Scheme), nil)
			md := mutating.NewDispatcher(upstreamAuthorizer{}, env.matcher, tcm)
			if err := md.Dispatch(ctx, a, o, mhooks); err != nil {
				return err
			}
			if rc := a.GetReinvocationContext(); rc.ShouldReinvoke() {
				rc.SetIsReinvoke()
				if err := md.Dispatch(ctx, a, o, mhooks); err != nil {
					return err
				}
			}
		}
		vd := validating.NewDispatcher(upstreamAuthorizer{}, generic.NewPolicyMatcher(env.matcher))
		return vd.Dispatch(ctx, a, o, validatingHooks(env, snap.vp, snap.vb))
	}()
	ours.Object = a.GetObject()
	if ours.Object != nil && ours.Object.GetObjectKind().GroupVersionKind().Empty() {
		// Upstream converts into the typed object in place, without type
		// information; the server sets it when encoding.
		ours.Object.GetObjectKind().SetGroupVersionKind(ours.Kind)
	}
	for k, v := range a.annotations {
		_ = ours.Record.AddAnnotation(k, v)
	}
	for _, w := range ws {
		ours.Record.AddWarning(w)
	}
	return result(t, ours, err, r.Object)
}

// policiesSnapshot sorts a case's policies and bindings for upstream.
type policiesSnapshot struct {
	vp []*admissionregistrationv1.ValidatingAdmissionPolicy
	vb []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	mp []*admissionregistrationv1.MutatingAdmissionPolicy
	mb []*admissionregistrationv1.MutatingAdmissionPolicyBinding
}

func (s *policiesSnapshot) add(obj runtime.Object, defaults bool) bool {
	switch o := obj.(type) {
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		if defaults {
			admissionregistration.Default(o)
		}
		s.vp = append(s.vp, o)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		if defaults {
			admissionregistration.Default(o)
		}
		s.vb = append(s.vb, o)
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		if defaults {
			admissionregistration.Default(o)
		}
		s.mp = append(s.mp, o)
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		if defaults {
			admissionregistration.Default(o)
		}
		s.mb = append(s.mb, o)
	default:
		return false
	}
	return true
}

var _ user.Info = (*user.DefaultInfo)(nil)
