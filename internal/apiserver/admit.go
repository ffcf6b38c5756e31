package apiserver

import (
	"context"
	"fmt"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
)

// The admission helpers of every write: the attributes admission sees, the
// two phases (skipped for the server's own writes without admission), an
// update's phases (a scale write is admitted as Scale objects), and the
// server's own write steps.

// attributes builds the admission attributes of a write.
func (s *Server) attributes(rq *request, res *registry.Resource, op admission.Operation, name string, obj, old runtime.Object, opts runtime.Object, dryRun bool) *admission.Attributes {
	kind := res.GroupVersionKind()
	if sub := rq.info.Subresource; sub != "" {
		if sr, ok := res.Subresource(sub); ok {
			kind = sr.Kind
		}
	}
	return &admission.Attributes{
		Name: name, Namespace: rq.info.Namespace,
		Resource: res.GroupVersionResource, Subresource: rq.info.Subresource,
		Kind: kind, Operation: op, Options: opts, DryRun: dryRun,
		Object: obj, OldObject: old, UserInfo: rq.user, Record: rq.record,
	}
}

// admit runs the mutating phase for a write; managedFields a plugin left
// invalid are reset, as upstream.
func (s *Server) admit(ctx context.Context, a *admission.Attributes) error {
	if !s.chain.Handles(a.Operation) || withoutAdmission(ctx) {
		return nil
	}
	before, _ := managedFieldsOf(a.Object)
	before = copyManagedFields(before) // a plugin may decode into the same slice
	if err := s.chain.Admit(ctx, a); err != nil {
		return err
	}
	resetInvalidManagedFields(a, before)
	if a.Operation == admission.Create || a.Operation == admission.Update {
		dedupOwnerReferences(a.Object, a.Record, true)
	}
	return nil
}

// validate runs the validating phase for a write.
func (s *Server) validate(ctx context.Context, a *admission.Attributes) error {
	if !s.chain.Handles(a.Operation) || withoutAdmission(ctx) {
		return nil
	}
	return s.chain.Validate(ctx, a)
}

// admitUpdate runs the mutating phase of an update and returns the object
// to continue with. A scale write is admitted as Scale objects and its
// replicas applied to the object afterwards.
func (s *Server) admitUpdate(ctx context.Context, rq *request, res *registry.Resource, attrs *admission.Attributes) (runtime.Object, error) {
	if rq.info.Subresource != "scale" {
		err := s.admit(ctx, attrs)
		return attrs.Object, err
	}
	obj := attrs.Object
	newScale, err := toScale(res, obj)
	if err != nil {
		return nil, err
	}
	oldScale, err := toScale(res, attrs.OldObject)
	if err != nil {
		return nil, err
	}
	if rq.scaleUID != nil {
		newScale.UID = *rq.scaleUID
	}
	attrs.Object, attrs.OldObject = newScale, oldScale
	if err := s.admit(ctx, attrs); err != nil {
		return nil, err
	}
	sc, ok := attrs.Object.(*autoscalingv1.Scale)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("admission returned a %T for a Scale", attrs.Object))
	}
	if err := validateScale(sc); err != nil {
		return nil, err
	}
	if err := checkScaleUID(res, obj, sc); err != nil {
		return nil, err
	}
	// the admitted Scale's resourceVersion is the update's precondition,
	// as upstream's scale subresource copies it onto the object
	return withReplicas(res, obj, sc)
}

// validateUpdate runs the validating phase of an update on obj.
func (s *Server) validateUpdate(ctx context.Context, rq *request, res *registry.Resource, attrs *admission.Attributes, obj, old runtime.Object) error {
	vattrs := *attrs
	vattrs.Object = obj
	if rq.info.Subresource == "scale" {
		newScale, err := toScale(res, obj)
		if err != nil {
			return err
		}
		vattrs.Object = newScale
	}
	return s.validate(ctx, &vattrs)
}

// runWriteSteps runs the server's own mutating steps (Config.WriteSteps)
// on obj, where upstream's PrepareForCreate/PrepareForUpdate run: after
// mutating admission, before validation and validating admission, which
// therefore see what is stored. They run on every create and update, with
// or without admission; each leaves its own step in the request's record
// and is metered as an admission controller of type "admit".
//
// The write check (Config.WriteCheck) runs first, as upstream's RBAC
// storage checks before its store prepares the object.
func (s *Server) runWriteSteps(ctx context.Context, a *admission.Attributes, obj runtime.Object) (runtime.Object, error) {
	sa := *a
	sa.Object = obj
	if s.cfg.WriteCheck != nil {
		if err := s.cfg.WriteCheck(ctx, &sa); err != nil {
			return nil, err
		}
	}
	for _, p := range s.cfg.WriteSteps {
		m, ok := p.Plugin.(admission.Mutator)
		if !ok || !m.Handles(sa.Operation) {
			continue
		}
		start := time.Now()
		err := m.Admit(ctx, &sa)
		s.cfg.AdmissionMetrics.ObserveAdmissionController(time.Since(start), err != nil, sa.Operation, "admit", p.Name)
		if err != nil {
			return nil, err
		}
	}
	return sa.Object, nil
}
