package policies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

// versionedObject is the request's object (and old object) as one matched
// kind, as the mutations change it. CEL sees its unstructured form,
// converted once per change, as upstream's mutating evaluator does.
type versionedObject struct {
	kind     schema.GroupVersionKind
	obj, old runtime.Object
	dirty    bool
	celObj   runtime.Object
	celOld   runtime.Object
	celErr   error
	celDone  bool
	oldDone  bool
}

// versionedFor returns the request's objects as kind, converted once per
// request (before any mutation runs, as upstream).
func (d *mapDispatch) versionedFor(kind schema.GroupVersionKind) (*versionedObject, error) {
	if vo, ok := d.versioned[kind]; ok {
		return vo, nil
	}
	vo := &versionedObject{kind: kind}
	var err error
	for _, p := range []struct {
		in  runtime.Object
		out *runtime.Object
	}{{d.a.Object, &vo.obj}, {d.a.OldObject, &vo.old}} {
		obj := p.in
		if obj != nil && kind != d.a.Kind {
			if obj, err = d.schema.ConvertTo(obj, kind); err != nil {
				return nil, err
			}
		}
		*p.out = withKind(obj, kind)
	}
	d.versioned[kind] = vo
	return vo, nil
}

// withKind returns obj with its apiVersion and kind set, copying it when
// they are not.
func withKind(obj runtime.Object, kind schema.GroupVersionKind) runtime.Object {
	if obj == nil || obj.GetObjectKind().GroupVersionKind() == kind {
		return obj
	}
	out := obj.DeepCopyObject()
	out.GetObjectKind().SetGroupVersionKind(kind)
	return out
}

func (vo *versionedObject) update(obj runtime.Object) {
	vo.obj, vo.dirty, vo.celDone, vo.celObj = obj, true, false, nil
}

// celObjects returns the object and old object in their unstructured form.
func (vo *versionedObject) celObjects() (runtime.Object, runtime.Object, error) {
	if !vo.celDone {
		vo.celDone = true
		vo.celObj, vo.celErr = toUnstructured(vo.obj)
		if vo.celErr != nil {
			vo.celErr = fmt.Errorf("failed to prepare object variable for evaluation: %w", vo.celErr)
		}
	}
	if !vo.oldDone {
		vo.oldDone = true
		var err error
		if vo.celOld, err = toUnstructured(vo.old); err != nil {
			return nil, nil, fmt.Errorf("failed to prepare oldObject variable for evaluation: %w", err)
		}
	}
	return vo.celObj, vo.celOld, vo.celErr
}

func toUnstructured(obj runtime.Object) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// mapState is what the plugin remembers between the two passes of a
// request's mutating chain.
type mapState struct {
	lastOutput        runtime.Object
	previouslyInvoked map[invocationKey]bool
	reinvoke          map[invocationKey]bool
}

// invocationKey identifies an invocation across passes.
type invocationKey struct{ policy, binding, param string }

func (s *mapState) promote() {
	for k := range s.previouslyInvoked {
		s.reinvoke[k] = true
	}
	clear(s.previouslyInvoked)
}

func mapStateOf(a *admission.Attributes) *mapState {
	if st, ok := a.Record.PluginState(MutatingName).(*mapState); ok {
		return st
	}
	st := &mapState{previouslyInvoked: map[invocationKey]bool{}, reinvoke: map[invocationKey]bool{}}
	a.Record.SetPluginState(MutatingName, st)
	return st
}

// run evaluates the invocations in order, each seeing the mutations of
// the ones before, with upstream's reinvocation bookkeeping.
func (d *mapDispatch) run(ctx context.Context) error {
	st := mapStateOf(d.a)
	reinvoking := d.a.Record.IsReinvoke()
	if reinvoking && !equality.Semantic.DeepEqual(st.lastOutput, d.a.Object) {
		st.promote() // a later plugin changed the object
	}
	defer func() {
		st.lastOutput = nil
		if d.a.Object != nil {
			st.lastOutput = d.a.Object.DeepCopyObject()
		}
	}()
	ns, err := d.namespace(ctx, d.a)
	if err != nil {
		var se *apierrors.StatusError
		if errors.As(err, &se) {
			return se
		}
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, d.a.Namespace)
	}
	authz := admcel.NewCachingAuthorizer(d.authorizer)
	var last *versionedObject
	for _, inv := range d.invocations {
		mu := inv.h.compiled.get().(*mutator)
		if len(mu.patchers) != mu.mutations {
			return apierrors.NewInternalError(fmt.Errorf("expected %v compiled evaluators for policy %v, got %v",
				mu.mutations, inv.h.name, len(mu.patchers)))
		}
		run, falseCondition, err := d.applies(ctx, inv, mu, authz)
		if err != nil {
			d.errs = append(d.errs, policyError{h: inv.h, b: inv.b, err: err, reason: metav1.StatusReasonInvalid})
			traceConfigError(MutatingName, d.a, inv.h, inv.b, fmt.Errorf("matchConditions: %w", err))
			continue
		}
		key := invocationKey{inv.h.name, inv.b.name, paramKey(inv.param)}
		if !run {
			traceSkipped(MutatingName, d.a, inv.h, inv.b, admission.SkipMatchCondition, conditionFalse(falseCondition))
			continue
		}
		if reinvoking && !st.reinvoke[key] {
			traceSkipped(MutatingName, d.a, inv.h, inv.b, admission.SkipNotReinvoked, notReinvoked(mu.ifNeeded))
			continue
		}
		if last, err = d.mutateAll(ctx, inv, mu, ns, authz, last); err != nil {
			return err
		}
		if mu.ifNeeded {
			st.previouslyInvoked[key] = true
		}
	}
	if last == nil || last.obj == nil || !last.dirty {
		return nil
	}
	st.promote()
	d.a.Record.RequestReinvocation()
	out, err := d.convert(last.obj, d.a.Kind)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to convert object: %w", err))
	}
	d.a.Object = out
	return nil
}

// applies evaluates the policy's matchConditions for an invocation.
func (d *mapDispatch) applies(ctx context.Context, inv invocation, mu *mutator, authz admission.Authorizer) (bool, string, error) {
	if mu.conditions == nil {
		return true, "", nil
	}
	obj, old, err := inv.vo.celObjects()
	if err != nil {
		return false, "", err
	}
	res := mu.conditions.Match(ctx, admcel.Input{Attributes: d.a, Kind: inv.vo.kind, Resource: d.a.Resource,
		Object: obj, OldObject: old, Params: inv.param, Authorizer: authz})
	mu.mc.observe(res, d.a)
	return res.Matches, res.FailedCondition, res.Err
}

// mutateAll runs an invocation's mutations in order and returns the
// versioned object last touched. Policy errors are recorded; a StatusError
// ends the request.
func (d *mapDispatch) mutateAll(ctx context.Context, inv invocation, mu *mutator, ns *corev1.Namespace, authz admission.Authorizer, last *versionedObject) (*versionedObject, error) {
	vo := inv.vo
	before := vo.obj
	began := time.Now()
	for _, pt := range mu.patchers {
		last = vo
		if vo.obj == nil {
			continue
		}
		start := time.Now()
		err := d.mutate(ctx, inv, pt, ns, authz)
		d.o.Metrics.observeMutation(inv.h.name, inv.b.name, time.Since(start), err)
		if err != nil {
			var se *apierrors.StatusError
			if errors.As(err, &se) {
				return nil, se
			}
			d.errs = append(d.errs, policyError{h: inv.h, b: inv.b, err: err, reason: metav1.StatusReasonInvalid})
		}
	}
	mutated := !equality.Semantic.DeepEqual(before, vo.obj)
	if mutated {
		mapStateOf(d.a).promote()
		d.a.Record.RequestReinvocation()
	}
	d.step(inv, mutated, time.Since(began), before, vo.obj)
	return last, nil
}

// mutate applies one mutation to the invocation's versioned object.
func (d *mapDispatch) mutate(ctx context.Context, inv invocation, pt patcher, ns *corev1.Namespace, authz admission.Authorizer) error {
	vo := inv.vo
	tc := d.typeConverter(vo.kind)
	if tc == nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("Resource kind %s not found. There can be a delay between when CustomResourceDefinitions are created and when they are available.", vo.kind))
	}
	obj, old, err := vo.celObjects()
	if err != nil {
		return err
	}
	in := admcel.Input{Attributes: d.a, Kind: vo.kind, Resource: inv.dec.Resource, Object: obj, OldObject: old,
		Params: inv.param, Namespace: ns, Authorizer: authz}
	out, err := pt.patch(ctx, patchRequest{in: in, current: vo.obj, tc: tc})
	if err != nil {
		return err
	}
	if u, ok := out.(*unstructured.Unstructured); ok {
		if _, typed := vo.obj.(*unstructured.Unstructured); !typed {
			if out, err = d.typed(u, vo.kind); err != nil {
				return err
			}
		}
	}
	if d.schema != nil {
		d.schema.Default(out)
	}
	vo.update(out)
	return nil
}

// typed converts an apply result back to the Go type of kind.
func (d *mapDispatch) typed(u *unstructured.Unstructured, kind schema.GroupVersionKind) (runtime.Object, error) {
	out, err := d.schema.New(kind)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(kind)
	return out, nil
}

// step records an invocation in the admission trace; a mutating one keeps
// the object before and after as JSON, from which the trace shows the change
// as a JSON patch and a field diff.
func (d *mapDispatch) step(inv invocation, mutated bool, took time.Duration, before, after runtime.Object) {
	round := 0
	if d.a.Record.IsReinvoke() {
		round = 1
	}
	detail := &admission.StepDetail{FailurePolicy: string(inv.h.failurePolicy)}
	if mutated {
		detail.Base, detail.After = objectJSON(before), objectJSON(after)
	}
	d.a.Record.AddStep(admission.Step{Plugin: MutatingName, Name: inv.h.name, Config: inv.b.name, Round: round,
		Matched: true, Mutated: mutated, Reason: "evaluated", Duration: took, Detail: detail})
}

// objectJSON is an object's JSON for the trace, nil when it has none.
func objectJSON(obj runtime.Object) []byte {
	if obj == nil {
		return nil
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return raw
}
