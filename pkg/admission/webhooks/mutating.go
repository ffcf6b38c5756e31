package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

// MutatingName is the upstream name of the mutating webhook plugin.
const MutatingName = "MutatingAdmissionWebhook"

// Mutating is the MutatingAdmissionWebhook plugin: it calls the matching
// mutating webhooks one after another and applies their patches.
type Mutating struct{ *dispatcher }

var _ admission.Mutator = (*Mutating)(nil)

// Handles every operation.
func (m *Mutating) Handles(admission.Operation) bool { return true }

// mutatingState is what the plugin remembers between the two passes of a
// request's mutating chain.
type mutatingState struct {
	lastOutput        runtime.Object
	previouslyInvoked map[string]bool
	reinvokeSet       map[string]bool
}

// awaitsReinvocation reports whether hooks called so far may be called
// again if the object changes: only then does the object the pass ends
// with matter (promoting an empty set changes nothing).
func (s *mutatingState) awaitsReinvocation() bool { return len(s.previouslyInvoked) > 0 }

// rememberOutput keeps a copy of the object a pass ends with, which the
// next pass compares with its input, when that comparison can matter.
func (s *mutatingState) rememberOutput(a *admission.Attributes) {
	if a.Object != nil && s.awaitsReinvocation() {
		s.lastOutput = a.Object.DeepCopyObject()
	}
}

func (s *mutatingState) promote() {
	for uid := range s.previouslyInvoked {
		s.reinvokeSet[uid] = true
	}
	s.previouslyInvoked = map[string]bool{}
}

func stateOf(a *admission.Attributes) *mutatingState {
	if st, ok := a.Record.PluginState(MutatingName).(*mutatingState); ok {
		return st
	}
	st := &mutatingState{previouslyInvoked: map[string]bool{}, reinvokeSet: map[string]bool{}}
	a.Record.SetPluginState(MutatingName, st)
	return st
}

// Admit calls the matching mutating webhooks in order.
func (m *Mutating) Admit(ctx context.Context, a *admission.Attributes) (err error) {
	if m.skip(a) {
		return nil
	}
	snap := m.snapshot()
	if len(snap.mutatingHooks) == 0 {
		return nil
	}
	mr := match.NewRequest(ctx, m.matchEnv(), a)
	// A request that fails keeps the object it came with: earlier
	// webhooks' patches are not applied.
	original := a.Object
	defer func() {
		if err != nil {
			a.Object = original
		}
	}()
	st := stateOf(a)
	reinvoking := a.Record.IsReinvoke()
	round := 0
	if reinvoking {
		round = 1
		if st.awaitsReinvocation() && !equality.Semantic.DeepEqual(a.Object, st.lastOutput) {
			st.promote()
		}
	}
	defer st.rememberOutput(a)
	static := onlyStatic(a)
	for _, h := range snap.mutating.visit(&mr) {
		if static && !h.Static {
			continue
		}
		inv, err := m.shouldCall(ctx, &mr, h, a)
		if err != nil {
			return err
		}
		if inv == nil {
			continue
		}
		if reinvoking && !st.reinvokeSet[h.UID] {
			m.skipped(a, h, admission.SkipNotReinvoked, notReinvoked(h), nil)
			continue
		}
		changed, err := m.callMutating(ctx, h, a, inv, round)
		if changed {
			st.promote()
			a.Record.RequestReinvocation()
		}
		if h.reinvokeIfNeeded() {
			st.previouslyInvoked[h.UID] = true
		}
		if err = m.handleFailure(ctx, h, a, err, round); err != nil {
			return err
		}
	}
	return nil
}

// handleFailure applies the failure policy to a call's error: an ignored
// call failure is recorded and dropped.
func (m *Mutating) handleFailure(ctx context.Context, h *hook, a *admission.Attributes, err error, round int) error {
	if err == nil {
		return nil
	}
	var ce *callError
	if !errors.As(err, &ce) {
		return toClientError(err)
	}
	if !h.failOpen() {
		return toClientError(err)
	}
	if !errors.Is(err, context.Canceled) {
		_ = a.Record.AddAnnotation(fmt.Sprintf("failed-open.mutation.webhook.admission.k8s.io/round_%d_index_%d", round, h.Index), h.Name)
		m.metrics.ObserveWebhookFailOpen(h.Name, "admit")
	}
	m.log.Warn("failing open a mutating webhook", "webhook", h.Name, "err", err)
	if ctx.Err() != nil {
		return errTimeout()
	}
	return nil
}

// callMutating calls one webhook and applies its patch. changed reports
// whether the object changed.
func (m *Mutating) callMutating(ctx context.Context, h *hook, a *admission.Attributes, inv *invocation, round int) (changed bool, err error) {
	start := time.Now()
	detail := &admission.StepDetail{ReviewVersion: reviewVersionOf(h), FailurePolicy: failurePolicyOf(h)}
	defer func() { m.observe(a, h, "admit", round, start, err, changed, detail) }()
	annotate := func(mutated bool) {
		v, _ := json.Marshal(struct {
			Configuration string `json:"configuration"`
			Webhook       string `json:"webhook"`
			Mutated       bool   `json:"mutated"`
		}{h.Config, h.Name, mutated})
		_ = a.Record.AddAnnotation(fmt.Sprintf("mutation.webhook.admission.k8s.io/round_%d_index_%d", round, h.Index), string(v))
	}
	if err := checkDryRun(h, a); err != nil {
		annotate(false) // upstream annotates every webhook it decided to call, nil sideEffects included
		return false, err
	}
	resp, err := m.call(ctx, h, a, inv, true)
	if err != nil {
		annotate(false)
		return false, err
	}
	recordResponse(h, a, resp)
	detail.Warnings, detail.AuditAnnotations = resp.Warnings, resp.AuditAnnotations
	if !resp.Allowed {
		annotate(false)
		return false, &rejection{Status: denialStatus(h.Name, resp.Result)}
	}
	changed, err = m.applyPatch(h, a, inv, resp, round, detail)
	annotate(changed)
	return changed, err
}

// applyPatch applies a webhook's JSON patch to the request object.
func (m *Mutating) applyPatch(h *hook, a *admission.Attributes, inv *invocation, resp *admissionv1.AdmissionResponse, round int, detail *admission.StepDetail) (bool, error) {
	if len(resp.Patch) == 0 {
		return false, nil
	}
	patch, err := decodePatch(resp.Patch)
	if err != nil {
		return false, &callError{Webhook: h.Name, Reason: fmt.Errorf("received undecodable patch in webhook response: %w", err), Code: 503}
	}
	if len(patch) == 0 {
		return false, nil
	}
	if inv.Object == nil {
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", h.Name))
	}
	if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		pt := ""
		if resp.PatchType != nil {
			pt = string(*resp.PatchType)
		}
		return false, &callError{Webhook: h.Name, Reason: fmt.Errorf("unsupported patch type %q", pt), Code: 400}
	}
	patched, err := m.patchObject(inv, patch)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	detail.Patch, detail.Base = resp.Patch, inv.objectJSON
	changed := !equality.Semantic.DeepEqual(inv.Object, patched)
	m.annotatePatch(h, a, patch, round)
	m.schema.Default(patched)
	inv.Object, inv.objectJSON = patched, nil
	out, err := m.schema.ConvertTo(patched, a.Kind)
	if err != nil {
		return changed, apierrors.NewInternalError(err)
	}
	a.Object = out
	return changed, nil
}

// patchObject applies patch to obj's JSON and decodes the result as a new
// object of the kind the patched JSON names.
func (m *Mutating) patchObject(inv *invocation, patch jsonpatch.Patch) (runtime.Object, error) {
	obj := inv.Object
	orig, _, err := inv.encodeObjects()
	if err != nil {
		return nil, err
	}
	out, spliced := spliceJSONPatch(orig, patch)
	if !spliced {
		if out, err = applyRecovering(patch, orig); err != nil {
			return nil, err
		}
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	next, err := m.decodeAs(gvk, out)
	if err != nil {
		return nil, err
	}
	// A patch that changed apiVersion or kind decodes as the kind it names.
	if got := next.GetObjectKind().GroupVersionKind(); !got.Empty() && got != gvk {
		if next, err = m.decodeAs(got, out); err != nil {
			return nil, err
		}
		gvk = got
	}
	next.GetObjectKind().SetGroupVersionKind(gvk)
	return next, nil
}

// decodeAs decodes JSON leniently into a new object of kind gvk.
func (m *Mutating) decodeAs(gvk schema.GroupVersionKind, data []byte) (runtime.Object, error) {
	obj, err := m.schema.New(gvk)
	if err != nil {
		return nil, err
	}
	// As upstream's JSON serializer decodes (non-strict): keys match
	// fields case-sensitively, integers stay integers.
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// annotatePatch records the applied patch at audit level Request.
func (m *Mutating) annotatePatch(h *hook, a *admission.Attributes, patch jsonpatch.Patch, round int) {
	v, ok := patchAnnotation(h, patch)
	if !ok {
		return
	}
	key := fmt.Sprintf("patch.webhook.admission.k8s.io/round_%d_index_%d", round, h.Index)
	_ = a.Record.AddAnnotationWithLevel(key, v, admission.LevelRequest)
}

// checkDryRun refuses to call a webhook with side effects for a dry run.
func checkDryRun(h *hook, a *admission.Attributes) error {
	if !a.DryRun {
		return nil
	}
	if h.SideEffects == nil {
		return &callError{Webhook: h.Name, Reason: errors.New("Webhook SideEffects is nil"), Code: 400}
	}
	switch *h.SideEffects {
	case admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.SideEffectClassNoneOnDryRun:
		return nil
	}
	return errDryRunUnsupported(h.Name)
}

// applyRecovering is patch.Apply with json-patch v4's panics returned as
// errors: it dereferences the missing value of a replace or test of the
// whole document (path ""), which a webhook may send.
func applyRecovering(patch jsonpatch.Patch, doc []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the JSON patch could not be applied: %v", r)
		}
	}()
	return patch.Apply(doc)
}

// decodePatch decodes a JSON patch; malformed input fails with the
// encoding/json error, as upstream's decoder reports it.
func decodePatch(raw []byte) (jsonpatch.Patch, error) {
	if p, ok := scanPatch(raw); ok {
		return p, nil
	}
	return jsonpatch.DecodePatch(raw)
}

// RecordsOwnSteps: the plugin leaves a trace step per webhook it considers.
func (*Mutating) RecordsOwnSteps() {}

// notReinvoked explains a hook the reinvocation pass does not call again.
func notReinvoked(h *hook) admission.Explainer {
	if h.reinvokeIfNeeded() {
		return admission.Explanation("reinvocationPolicy IfNeeded: the object did not change after this webhook's first call")
	}
	return admission.Explanation("reinvocationPolicy Never: called once, in the first pass")
}

// reviewVersionOf is the AdmissionReview apiVersion the hook is sent.
func reviewVersionOf(h *hook) string {
	v, ok := reviewVersion(h.AdmissionReviewVersions)
	if !ok {
		return ""
	}
	return "admission.k8s.io/" + v
}
