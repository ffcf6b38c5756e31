package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
	"github.com/admitd/admitd/pkg/admission/match"
)

// ValidatingName is the upstream name of the validating policy plugin.
const ValidatingName = "ValidatingAdmissionPolicy"

// Validating is the ValidatingAdmissionPolicy plugin.
type Validating struct{ *plugin }

var _ admission.Validator = (*Validating)(nil)

// NewValidating returns the plugin for o and pc.
func NewValidating(o Options, pc admission.PluginContext) (*Validating, error) {
	v := &Validating{}
	var err error
	if v.plugin, err = newPlugin(ValidatingName, o, pc, v.buildHooks); err != nil {
		return nil, err
	}
	return v, nil
}

// Handles CREATE, UPDATE, DELETE and CONNECT.
func (v *Validating) Handles(admission.Operation) bool { return true }

func (v *Validating) buildHooks(snap *Snapshot, prev *hookSet) *hookSet {
	policies := make([]policyDef, len(snap.ValidatingPolicies))
	for i, p := range snap.ValidatingPolicies {
		p := p
		policies[i] = policyDef{name: p.Name, rv: p.ResourceVersion, paramKind: p.Spec.ParamKind,
			matchConstraints: p.Spec.MatchConstraints, failurePolicy: p.Spec.FailurePolicy,
			compile: func() any { return compileValidator(v.o.CEL, p).withMetrics(v.o.AdmissionMetrics, p.Name) }}
	}
	bindings := make([]bindingDef, len(snap.ValidatingBindings))
	for i, b := range snap.ValidatingBindings {
		bindings[i] = bindingDef{name: b.Name, policyName: b.Spec.PolicyName, paramRef: b.Spec.ParamRef,
			matchResources: b.Spec.MatchResources, actions: b.Spec.ValidationActions}
	}
	return newHookSet(policies, bindings, prev)
}

// Validate evaluates every policy binding that matches the request.
func (v *Validating) Validate(ctx context.Context, a *admission.Attributes) error {
	sets := v.hookSets(a)
	if empty(sets) {
		return nil
	}
	mr := match.NewRequest(ctx, v.matchEnv(), a)
	var buf [16]int32
	d := &vapDispatch{plugin: v.plugin, a: a, authz: admcel.NewCachingAuthorizer(v.authorizer)}
	for _, set := range sets {
		for _, i := range set.visit(&mr, buf[:0]) {
			if err := d.hook(ctx, &mr, set.hooks[i]); err != nil {
				return err
			}
		}
	}
	return d.finish()
}

// vapDispatch is the state of one request's validation.
type vapDispatch struct {
	*plugin
	a         *admission.Attributes
	authz     admission.Authorizer
	versioned map[schema.GroupVersionKind][2]runtime.Object
	outcome
}

// hook evaluates one policy's bindings; an error ends the request.
func (d *vapDispatch) hook(ctx context.Context, mr *match.Request, h *hook) error {
	dec := h.criteria.Match(mr)
	switch dec.Reason {
	case match.Matched:
	case match.Errored:
		d.configError(h, nil, dec.Err)
		return nil
	default:
		traceSkip(ValidatingName, mr, h, nil, dec)
		return nil
	}
	if !d.paramKindKnown(h) {
		d.configError(h, nil, paramKindError(h))
		return nil
	}
	collector := newAuditCollector()
	for _, b := range h.bindings {
		if err := d.binding(ctx, mr, h, b, dec, collector); err != nil {
			return err
		}
	}
	collector.publish(h.name, d.a)
	return nil
}

func (d *vapDispatch) binding(ctx context.Context, mr *match.Request, h *hook, b *binding, dec match.Decision, collector *auditCollector) error {
	switch bd := b.criteria.Match(mr); bd.Reason {
	case match.Matched:
	case match.Errored:
		d.configError(h, b, bd.Err)
		return nil
	default:
		traceSkip(ValidatingName, mr, h, b, bd)
		return nil
	}
	params, err := collectParams(ctx, d.o.Params, h, b, d.a.Namespace)
	if err != nil {
		d.configError(h, b, err)
		return nil
	}
	if len(params) == 0 {
		traceNoParams(ValidatingName, d.a, h, b)
	}
	var objs [2]runtime.Object
	if len(params) > 0 {
		if objs, err = d.versionedObjects(dec.Kind); err != nil {
			d.configError(h, b, fmt.Errorf("failed to convert object version: %w", err))
			return nil
		}
	}
	ns, err := d.namespace(ctx, d.a)
	if err != nil {
		return err
	}
	val := h.compiled.get().(*validator)
	for _, p := range params {
		in := admcel.Input{Attributes: d.a, Kind: dec.Kind, Resource: dec.Resource, Object: objs[0], OldObject: objs[1],
			Params: validatingParam(h, p), Namespace: admcel.TrimNamespace(ns), Authorizer: d.authz}
		start := time.Now()
		res := val.validate(ctx, in, ns)
		d.record(h, b, res, collector)
		d.step(h, b, res, time.Since(start))
	}
	return nil
}

// step records one evaluation in the admission trace. A failed validation
// denies the step only when the binding's actions include Deny; under Warn
// or Audit alone the step is admitted and carries the warning or the
// validation_failure entries the request got from it.
func (d *vapDispatch) step(h *hook, b *binding, res validationResult, elapsed time.Duration) {
	s := admission.Step{Plugin: ValidatingName, Name: h.name, Config: b.name, Matched: true, Reason: "admitted", Duration: elapsed,
		Detail: &admission.StepDetail{FailurePolicy: string(h.failurePolicy)}}
	var unenforced []validationFailure
	for i, dec := range res.decisions {
		switch {
		case dec.deny && b.denies():
			s.Reason = "failed: " + dec.message
			if dec.eval == evalError {
				s.Err = dec.message
			}
		case dec.deny:
			unenforced = append(unenforced, validationFailure{Message: dec.message, Policy: h.name, Binding: b.name,
				ExpressionIndex: i, ValidationActions: b.actions})
			continue
		case dec.eval == evalError:
			s.Err, s.Detail.FailedOpen = dec.message, true // failurePolicy Ignore
			continue
		default:
			continue
		}
		break
	}
	if s.Reason == "admitted" {
		d.unenforcedDetail(s.Detail, b, unenforced)
	}
	if res.falseCondition != "" {
		s.Matched, s.Reason, s.Skip = false, "skipped", admission.SkipMatchCondition
		s.Detail.Why = conditionFalse(res.falseCondition)
	}
	d.a.Record.AddStep(s)
}

// unenforcedDetail puts on a step the warnings (Warn) and the
// validation_failure entries (Audit) that failed validations of a binding
// without Deny gave the request.
func (d *vapDispatch) unenforcedDetail(detail *admission.StepDetail, b *binding, failures []validationFailure) {
	if len(failures) == 0 {
		return
	}
	for _, action := range b.actions {
		switch action {
		case admissionregistrationv1.Warn:
			for _, f := range failures {
				detail.Warnings = append(detail.Warnings, validationWarning(f.Policy, f.Binding, f.Message))
			}
		case admissionregistrationv1.Audit:
			if value, err := json.Marshal(failures); err == nil {
				detail.AuditAnnotations = map[string]string{validationFailureKey: string(value)}
			}
		}
	}
}

// validationWarning is the warning a failed validation bound with Warn
// gives the request.
func validationWarning(policy, binding, message string) string {
	return fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", policy, binding, message)
}

// versionedObjects returns the request's object and old object as kind,
// converting them once per kind.
func (d *vapDispatch) versionedObjects(kind schema.GroupVersionKind) ([2]runtime.Object, error) {
	if kind == d.a.Kind {
		return [2]runtime.Object{d.a.Object, d.a.OldObject}, nil
	}
	if objs, ok := d.versioned[kind]; ok {
		return objs, nil
	}
	obj, err := d.convert(d.a.Object, kind)
	if err != nil {
		return [2]runtime.Object{}, err
	}
	old, err := d.convert(d.a.OldObject, kind)
	if err != nil {
		return [2]runtime.Object{}, err
	}
	if d.versioned == nil {
		d.versioned = map[schema.GroupVersionKind][2]runtime.Object{}
	}
	d.versioned[kind] = [2]runtime.Object{obj, old}
	return d.versioned[kind], nil
}

// validatingParam gives a param without type information the apiVersion
// and kind of the policy's paramKind, as upstream wraps typed params.
func validatingParam(h *hook, p runtime.Object) runtime.Object {
	if p == nil || !p.GetObjectKind().GroupVersionKind().Empty() {
		return p
	}
	out := p.DeepCopyObject()
	out.GetObjectKind().SetGroupVersionKind(h.paramGVK)
	return out
}

// record applies a binding's validationActions to one evaluation.
func (d *vapDispatch) record(h *hook, b *binding, res validationResult, collector *auditCollector) {
	for i, dec := range res.decisions {
		if !dec.deny {
			if dec.eval == evalError {
				d.o.Metrics.observeValidation(h.name, b.name, dec, "allow")
			}
			continue
		}
		for _, action := range b.actions {
			switch action {
			case admissionregistrationv1.Deny:
				d.denied = append(d.denied, denial{policy: h.name, binding: b.name, decision: dec})
				d.o.Metrics.observeValidation(h.name, b.name, dec, "deny")
			case admissionregistrationv1.Audit:
				d.failures = append(d.failures, validationFailure{Message: dec.message, Policy: h.name,
					Binding: b.name, ExpressionIndex: i, ValidationActions: b.actions})
				d.o.Metrics.observeValidation(h.name, b.name, dec, "audit")
			case admissionregistrationv1.Warn:
				d.a.Record.AddWarning(validationWarning(h.name, b.name, dec.message))
				d.o.Metrics.observeValidation(h.name, b.name, dec, "warn")
			}
		}
	}
	for _, an := range res.annotations {
		switch {
		case an.publish:
			value := an.value
			if len(value) > maxAuditValueBytes {
				value = value[:maxAuditValueBytes]
			}
			collector.add(an.key, value)
		case an.err != "":
			dec := decision{deny: true, eval: evalError, message: an.err, elapsed: an.elapsed}
			d.denied = append(d.denied, denial{policy: h.name, binding: b.name, decision: dec})
			d.o.Metrics.observeValidation(h.name, b.name, dec, "deny")
		}
	}
}

// configError records a policy (b == nil) or binding configuration error
// under the policy's failurePolicy; it ignores validationActions.
func (d *vapDispatch) configError(h *hook, b *binding, err error) {
	traceConfigError(ValidatingName, d.a, h, b, err)
	var msg string
	switch {
	case h.failurePolicy == admissionregistrationv1.Ignore:
		return
	case h.failurePolicy != admissionregistrationv1.Fail:
		msg = fmt.Sprintf("unrecognized failure policy: '%v'", h.failurePolicy)
	case b == nil:
		msg = fmt.Sprintf("failed to configure policy: %v", err)
	default:
		msg = fmt.Sprintf("failed to configure binding: %v", err)
	}
	dn := denial{policy: h.name, decision: decision{deny: true, message: msg}}
	if b != nil {
		dn.binding = b.name
	}
	d.denied = append(d.denied, dn)
}

// RecordsOwnSteps: the plugin leaves a trace step per policy binding it considers.
func (*Validating) RecordsOwnSteps() {}
