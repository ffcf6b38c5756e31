package webhooks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

// ValidatingName is the upstream name of the validating webhook plugin.
const ValidatingName = "ValidatingAdmissionWebhook"

// Validating is the ValidatingAdmissionWebhook plugin: it calls every
// matching validating webhook in parallel; the first error to arrive wins.
type Validating struct{ *dispatcher }

var _ admission.Validator = (*Validating)(nil)

// Handles every operation.
func (v *Validating) Handles(admission.Operation) bool { return true }

type matchedHook struct {
	hook *hook
	inv  *invocation
}

// Validate matches every hook, then calls the matching ones concurrently.
func (v *Validating) Validate(ctx context.Context, a *admission.Attributes) error {
	if v.skip(a) {
		return nil
	}
	snap := v.snapshot()
	if len(snap.validatingHooks) == 0 {
		return nil
	}
	mr := match.NewRequest(ctx, v.matchEnv(), a)
	var matched []matchedHook
	static := onlyStatic(a)
	for _, h := range snap.validating.visit(&mr) {
		if static && !h.Static {
			continue
		}
		inv, err := v.shouldCall(ctx, &mr, h, a)
		if err != nil {
			return err
		}
		if inv != nil {
			matched = append(matched, matchedHook{h, inv})
		}
	}
	if len(matched) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return errTimeout()
	}
	if len(matched) == 1 {
		// nothing to run in parallel with (callValidating recovers its own
		// panics wherever it runs)
		return v.callValidating(ctx, matched[0].hook, a, matched[0].inv, 0)
	}
	errs := make(chan error, len(matched))
	var wg sync.WaitGroup
	for i, m := range matched {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := v.callValidating(ctx, m.hook, a, m.inv, i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	return nil
}

// callValidating calls one webhook and turns its outcome into nil (allowed
// or failed open) or the error the client receives.
func (v *Validating) callValidating(ctx context.Context, h *hook, a *admission.Attributes, inv *invocation, index int) (err error) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			err = v.applyPolicy(h, a, fmt.Errorf("%s/%s has panicked: %v", ValidatingName, h.Name, r), index, true)
		}
	}()
	detail := &admission.StepDetail{ReviewVersion: reviewVersionOf(h), FailurePolicy: failurePolicyOf(h)}
	raw := v.invoke(ctx, h, a, inv, detail)
	v.observe(a, h, "validating", 0, start, raw, false, detail)
	return v.applyPolicy(h, a, raw, index, false)
}

// invoke calls the webhook; the error is a *callError, a *rejection or an
// error of the server's own.
func (v *Validating) invoke(ctx context.Context, h *hook, a *admission.Attributes, inv *invocation, detail *admission.StepDetail) error {
	if err := checkDryRun(h, a); err != nil {
		return err
	}
	resp, err := v.call(ctx, h, a, inv, false)
	if err != nil {
		return err
	}
	recordResponse(h, a, resp)
	detail.Warnings, detail.AuditAnnotations = resp.Warnings, resp.AuditAnnotations
	if !resp.Allowed {
		return &rejection{Status: denialStatus(h.Name, resp.Result)}
	}
	return nil
}

// applyPolicy applies the failure policy: ignored call failures (and
// panics) are recorded and dropped.
func (v *Validating) applyPolicy(h *hook, a *admission.Attributes, err error, index int, panicked bool) error {
	if err == nil {
		return nil
	}
	if (isCallError(err) || panicked) && h.failOpen() {
		if !errors.Is(err, context.Canceled) {
			_ = a.Record.AddAnnotation(fmt.Sprintf("failed-open.validating.webhook.admission.k8s.io/round_0_index_%d", index), h.Name)
			v.metrics.ObserveWebhookFailOpen(h.Name, "validating")
		}
		v.log.Warn("failing open a validating webhook", "webhook", h.Name, "err", err)
		return nil
	}
	if panicked {
		return internalError(err)
	}
	return toClientError(err)
}

// RecordsOwnSteps: the plugin leaves a trace step per webhook it considers.
func (*Validating) RecordsOwnSteps() {}
