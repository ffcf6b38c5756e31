package policies

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

// MutatingName is the upstream name of the mutating policy plugin.
const MutatingName = "MutatingAdmissionPolicy"

// Mutating is the MutatingAdmissionPolicy plugin.
type Mutating struct{ *plugin }

var _ admission.Mutator = (*Mutating)(nil)

// NewMutating returns the plugin for o and pc.
func NewMutating(o Options, pc admission.PluginContext) (*Mutating, error) {
	m := &Mutating{}
	var err error
	if m.plugin, err = newPlugin(MutatingName, o, pc, m.buildHooks); err != nil {
		return nil, err
	}
	return m, nil
}

// Handles CREATE, UPDATE and CONNECT: mutating policies never see DELETE.
func (m *Mutating) Handles(op admission.Operation) bool { return op != admission.Delete }

func (m *Mutating) buildHooks(snap *Snapshot, prev *hookSet) *hookSet {
	policies := make([]policyDef, len(snap.MutatingPolicies))
	for i, p := range snap.MutatingPolicies {
		p := p
		policies[i] = policyDef{name: p.Name, rv: p.ResourceVersion, paramKind: p.Spec.ParamKind,
			matchConstraints: p.Spec.MatchConstraints, failurePolicy: p.Spec.FailurePolicy,
			compile: func() any { return compileMutator(m.o.CEL, m.schema, p).withMetrics(m.o.AdmissionMetrics, p.Name) }}
	}
	bindings := make([]bindingDef, len(snap.MutatingBindings))
	for i, b := range snap.MutatingBindings {
		bindings[i] = bindingDef{name: b.Name, policyName: b.Spec.PolicyName, paramRef: b.Spec.ParamRef,
			matchResources: b.Spec.MatchResources}
	}
	return newHookSet(policies, bindings, prev)
}

// invocation is one (policy, binding, param) a request runs.
type invocation struct {
	h     *hook
	b     *binding
	param runtime.Object
	dec   match.Decision
	vo    *versionedObject
}

// policyError is a mutating policy's failure; b is nil for a policy
// configuration error. Its text is upstream's PolicyError's.
type policyError struct {
	h      *hook
	b      *binding
	err    error
	reason metav1.StatusReason
}

func (e policyError) Error() string {
	if e.b != nil {
		return fmt.Sprintf("policy '%s' with binding '%s' denied request: %s", e.h.name, e.b.name, e.err.Error())
	}
	return fmt.Sprintf("policy %q denied request: %s", e.h.name, e.err.Error())
}

// mapDispatch is the state of one request's mutation.
type mapDispatch struct {
	*Mutating
	a           *admission.Attributes
	versioned   map[schema.GroupVersionKind]*versionedObject
	invocations []invocation
	errs        []policyError
}

// Admit runs the mutations of every policy binding that matches.
func (m *Mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	sets := m.hookSets(a)
	if empty(sets) {
		return nil
	}
	mr := match.NewRequest(ctx, m.matchEnv(), a)
	var buf [16]int32
	d := &mapDispatch{Mutating: m, a: a, versioned: map[schema.GroupVersionKind]*versionedObject{}}
	for _, set := range sets {
		for _, i := range set.visit(&mr, buf[:0]) {
			d.collect(ctx, &mr, set.hooks[i])
		}
	}
	if len(d.invocations) > 0 {
		if err := d.run(ctx); err != nil {
			return err
		}
	}
	return d.finish()
}

// collect adds the invocations of one policy, or its configuration errors.
func (d *mapDispatch) collect(ctx context.Context, mr *match.Request, h *hook) {
	dec := h.criteria.Match(mr)
	switch dec.Reason {
	case match.Matched:
	case match.Errored:
		d.configError(h, nil, dec.Err)
		return
	default:
		traceSkip(MutatingName, mr, h, nil, dec)
		return
	}
	if !d.paramKindKnown(h) {
		d.configError(h, nil, paramKindError(h))
		return
	}
	for _, b := range h.bindings {
		switch bd := b.criteria.Match(mr); bd.Reason {
		case match.Matched:
		case match.Errored:
			d.configError(h, b, bd.Err)
			continue
		default:
			traceSkip(MutatingName, mr, h, b, bd)
			continue
		}
		vo, err := d.versionedFor(dec.Kind)
		if err != nil {
			d.configError(h, nil, err)
			continue
		}
		params, err := collectParams(ctx, d.o.Params, h, b, d.a.Namespace)
		if err != nil {
			d.configError(h, b, err)
			continue
		}
		if len(params) == 0 {
			traceNoParams(MutatingName, d.a, h, b)
		}
		for _, p := range params {
			d.invocations = append(d.invocations, invocation{h: h, b: b, param: mutatingParam(p), dec: dec, vo: vo})
		}
	}
}

func (d *mapDispatch) configError(h *hook, b *binding, err error) {
	if b == nil {
		err = fmt.Errorf("failed to configure policy: %w", err)
	} else {
		err = fmt.Errorf("failed to configure binding: %w", err)
	}
	d.errs = append(d.errs, policyError{h: h, b: b, err: err})
	traceConfigError(MutatingName, d.a, h, b, err)
}

// mutatingParam is a param as mutating policies see it: a built-in param
// has no apiVersion and kind (upstream reads it from a typed informer and,
// unlike the validating plugin, does not add them back).
func mutatingParam(p runtime.Object) runtime.Object {
	if p == nil {
		return nil
	}
	if _, ok := p.(*unstructured.Unstructured); ok || p.GetObjectKind().GroupVersionKind().Empty() {
		return p
	}
	out := p.DeepCopyObject()
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out
}

// finish drops the errors of policies that ignore failures and turns the
// rest into one 403: the first error's message (and reason), one cause
// per error.
func (d *mapDispatch) finish() error {
	var kept []policyError
	for _, e := range d.errs {
		if !e.h.ignores() {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	var se *apierrors.StatusError
	if !errors.As(admission.NewForbidden(d.a, errors.New("admission request denied by policy")), &se) {
		return apierrors.NewInternalError(errors.New("failed to create status error"))
	}
	se.ErrStatus.Message = kept[0].Error()
	if kept[0].reason != "" {
		se.ErrStatus.Reason = kept[0].reason
	}
	for _, e := range kept {
		se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{Message: e.Error()})
	}
	return se
}

// RecordsOwnSteps: the plugin leaves a trace step per policy binding it considers.
func (*Mutating) RecordsOwnSteps() {}
