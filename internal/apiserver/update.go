package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/kubelayout"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
)

const optimisticLockMsg = "the object has been modified; please apply your changes to the latest version and try again"

// transform computes the requested object from the current one (a PUT body,
// or a patch applied to the current object). current is nil when the
// object does not exist.
type transform func(current runtime.Object) (runtime.Object, error)

// checkBodyName is upstream's check of an update's body before anything
// is read: it names the object the URL names.
func checkBodyName(bodyName, urlName string) error {
	if bodyName == "" {
		return errBadRequest("the name of the object (%s based on URL) was undeterminable: name must be provided", urlName)
	}
	if bodyName != urlName {
		return errBadRequest("the name of the object (%s) does not match the name on the URL (%s)", bodyName, urlName)
	}
	return nil
}

func (s *Server) serveUpdate(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	opts, err := parseUpdateOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if rq.info.Subresource == "scale" {
		s.serveUpdateScale(w, r, rq, res, opts)
		return
	}
	body, err := s.decodeWriteBody(r, rq, res, opts.FieldValidation)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := checkBodyName(accessor(body).GetName(), rq.info.Name); err != nil {
		writeError(w, r, err)
		return
	}
	// as upstream's handler, before the store: a body in another
	// namespace is a 400 whatever else the update would meet
	if err := ensureNamespace(objectNamespace(res, rq.info.Namespace), accessor(body)); err != nil {
		writeError(w, r, err)
		return
	}
	s.keepRequestObject(rq, body)
	rq.uidPrecondition = accessor(body).GetUID()
	dedupOwnerReferences(body, rq.record, false)
	next := func(runtime.Object) (runtime.Object, error) { return body.DeepCopyObject(), nil }
	ctx, timedOut, cancel := writeDeadline(r.Context())
	defer cancel()
	out, created, err := s.update(ctx, rq, res, next, opts)
	if err = timedOut(err); err != nil {
		writeError(w, r, err)
		return
	}
	rq.event.ResponseObject = out
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	s.writeResult(w, r, code, res, out)
}

// update is upstream's guaranteed update: read, transform, admit, validate
// and compare-and-swap, retried on conflicts the client did not ask for.
func (s *Server) update(ctx context.Context, rq *request, res *registry.Resource, next transform, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	name := rq.info.Name
	key := layout.Key(res, objectNamespace(res, rq.info.Namespace), name)
	for {
		kv, err := s.store.Get(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			return s.createOnUpdate(ctx, rq, res, next, opts)
		}
		if err != nil {
			return nil, false, err
		}
		old, err := layout.DecodeContext(ctx, res, kv)
		if err != nil {
			return nil, false, err
		}
		if err := checkUIDPrecondition(res, rq, old, len(opts.DryRun) > 0); err != nil {
			return nil, false, err
		}
		out, retry, err := s.updateOnce(ctx, rq, res, key, kv, old, next, opts)
		if retry {
			continue
		}
		return out, false, err
	}
}

func (s *Server) createOnUpdate(ctx context.Context, rq *request, res *registry.Resource, next transform, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	if !(res.AllowCreateOnUpdate || rq.apply) || rq.info.Subresource != "" {
		return nil, false, errNotFound(res, rq.info.Name)
	}
	if uid := rq.uidPrecondition; uid != "" {
		// upstream's store checks the body's uid against the empty object
		// a create-on-update starts from
		return nil, false, uidPreconditionFailed(res, objectNamespace(res, rq.info.Namespace), rq.info.Name, uid, "", len(opts.DryRun) > 0)
	}
	obj, err := next(nil)
	if err != nil {
		return nil, false, err
	}
	copts := &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"},
		DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}
	accessor(obj).SetResourceVersion("")
	out, _, err := s.create(ctx, rq, res, obj, copts)
	return out, err == nil, err
}

// updateOnce tries one compare-and-swap. retry is true when the stored
// object changed underneath: the caller reads it again and starts over.
func (s *Server) updateOnce(ctx context.Context, rq *request, res *registry.Resource, key string, current storage.KeyValue, old runtime.Object, next transform, opts *metav1.UpdateOptions) (out runtime.Object, retry bool, err error) {
	obj, err := next(old.DeepCopyObject())
	if err != nil {
		return nil, false, err
	}
	m, om := accessor(obj), accessor(old)
	ns := objectNamespace(res, rq.info.Namespace)
	if err := ensureNamespace(ns, m); err != nil {
		return nil, false, err
	}
	res.Default(obj)
	obj = s.recordUpdate(rq, res, old, obj, opts.FieldManager)
	dryRun := len(opts.DryRun) > 0
	attrs := s.attributes(rq, res, admission.Update, rq.info.Name, obj, old, opts, dryRun)
	// Mutating admission sees the update before its resourceVersion is
	// checked, as upstream's store runs it inside GuaranteedUpdate: a stale
	// update a plugin or webhook refuses gets their answer, not a conflict.
	if obj, err = s.admitUpdate(ctx, rq, res, attrs); err != nil {
		return nil, false, err
	}
	clientRV := accessor(obj).GetResourceVersion()
	if clientRV != "" && clientRV != om.GetResourceVersion() {
		return nil, false, apierrors.NewConflict(res.GroupResource(), rq.info.Name, errors.New(optimisticLockMsg))
	}
	if err := ensureNamespace(ns, accessor(obj)); err != nil {
		return nil, false, err
	}
	// a Scale without a resourceVersion updates unconditionally whatever
	// its object's strategy says, as upstream's scale storage does
	if clientRV == "" && res.Strategy.RequireResourceVersion && rq.info.Subresource != "scale" {
		return nil, false, resourceVersionRequired(res, rq.info.Name)
	}
	if clientRV == "" {
		// an unconditional update takes the stored resourceVersion
		accessor(obj).SetResourceVersion(om.GetResourceVersion())
	}
	if obj, err = s.runWriteSteps(ctx, attrs, obj); err != nil {
		return nil, false, err
	}
	undo, release, err := s.updateServiceIPs(ctx, res, obj, old, dryRun)
	if err != nil {
		return nil, false, err
	}
	defer func() {
		if err != nil || retry || dryRun {
			undo()
		} else {
			release()
		}
	}()
	obj = s.prepareForUpdate(rq, res, obj, old)
	undoPorts, releasePorts, err := s.updateNodePorts(res, obj, old)
	if err != nil {
		return nil, false, err
	}
	defer func() {
		if err != nil || retry || dryRun {
			undoPorts()
		} else {
			releasePorts()
		}
	}()
	keepManagedFieldsTimes(obj, old)
	if err := customTypeMetaError(res, obj); err != nil {
		return nil, false, err
	}
	errs := s.runChecks(ctx, rq, res, obj, old)
	if errs = append(errs, res.ValidateSubresourceChange(rq.info.Subresource, obj, old)...); len(errs) > 0 {
		return nil, false, invalid(res, obj, errs)
	}
	if errs := s.checkSigner(ctx, rq, res, obj, old); len(errs) > 0 {
		return nil, false, invalid(res, obj, errs)
	}
	addWarnings(rq, res.UpdateWarnings(rq.info.Subresource, obj, old))
	if err := s.validateUpdate(ctx, rq, res, attrs, obj, old); err != nil {
		return nil, false, err
	}
	return s.commitUpdate(ctx, res, key, current, obj, old, dryRun, rq.apply)
}

// commitUpdate writes the updated object unless nothing changed; an object
// being deleted whose last finalizer is gone (for a namespace, its
// spec.finalizers too, as upstream's ShouldDeleteNamespaceDuringUpdate) is
// deleted instead, unless
// its grace period is still running (a pod being deleted gracefully stays
// until its kubelet deletes it, as upstream's shouldDeleteDuringUpdate). When the
// stored object changed since it was read, retry is true: as upstream's
// GuaranteedUpdate, the update starts again from the new object, so a patch
// applies to it and a body whose resourceVersion is now stale meets the
// conflict check of updateOnce.
func (s *Server) commitUpdate(ctx context.Context, res *registry.Resource, key string, current storage.KeyValue, obj, old runtime.Object, dryRun, apply bool) (out runtime.Object, retry bool, err error) {
	rev := current.ModRevision
	m := accessor(obj)
	m.SetResourceVersion(accessor(old).GetResourceVersion())
	if dryRun { // as upstream's dry-run storage: nothing is encoded (nor converted)
		return obj, false, nil
	}
	stored, err := toStorage(ctx, res, obj)
	if err != nil {
		return nil, false, err
	}
	data, err := layout.Encode(stored)
	if err != nil {
		return nil, false, err
	}
	oldData, err := storedBytes(res, current, old)
	if err != nil {
		return nil, false, err
	}
	if bytes.Equal(data, oldData) {
		return obj, false, nil
	}
	if m.GetDeletionTimestamp() != nil && !hasFinalizers(res, obj) && !gracePending(accessor(old)) {
		_, drev, err := s.store.Delete(ctx, key, rev)
		if errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrNotFound) {
			return nil, true, nil
		}
		m.SetResourceVersion(fmt.Sprint(drev))
		if err == nil {
			s.afterWrite(ctx, WriteEvent{Resource: res.GroupVersionResource, Deleted: true, Object: obj})
		}
		return obj, false, err
	}
	kv, err := s.store.Update(ctx, key, data, rev)
	if errors.Is(err, storage.ErrTooLarge) && !apply {
		data, err = withoutManagedFields(obj, stored)
		if err == nil {
			kv, err = s.store.Update(ctx, key, data, rev)
		}
	}
	if errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrNotFound) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	m.SetResourceVersion(fmt.Sprint(kv.ModRevision))
	s.afterWrite(ctx, WriteEvent{Resource: res.GroupVersionResource, Object: obj})
	out, err = fromStorage(ctx, res, obj, stored, kv.ModRevision)
	return out, false, err
}

// prepareForUpdate carries server-owned fields over from the old object,
// then applies the status rule and the kind's preparation.
func (s *Server) prepareForUpdate(rq *request, res *registry.Resource, obj, old runtime.Object) runtime.Object {
	m, om := accessor(obj), accessor(old)
	if m.GetUID() == "" { // a different one is refused by validation
		m.SetUID(om.GetUID())
	}
	m.SetCreationTimestamp(om.GetCreationTimestamp())
	m.SetDeletionTimestamp(om.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(om.GetDeletionGracePeriodSeconds())
	m.SetGeneration(om.GetGeneration())
	return registry.PrepareForUpdate(res, rq.info.Subresource, obj, old)
}

// checkUIDPrecondition refuses a PUT whose body names another uid than
// the stored object's, as upstream's store checks the precondition the
// body makes before anything else of the update (admission included).
func checkUIDPrecondition(res *registry.Resource, rq *request, old runtime.Object, dryRun bool) error {
	uid := rq.uidPrecondition
	m := accessor(old)
	if uid == "" || uid == m.GetUID() {
		return nil
	}
	return uidPreconditionFailed(res, m.GetNamespace(), m.GetName(), uid, m.GetUID(), dryRun)
}

// uidPreconditionFailed is upstream's 409 for a uid precondition the
// stored object (uid stored, "" when there is none) fails: the storage
// error naming upstream's key, which a dry run's storage names without
// its /registry root.
func uidPreconditionFailed(res *registry.Resource, namespace, name string, uid, stored types.UID, dryRun bool) error {
	key := kubelayout.UpstreamKey(res, namespace, name)
	if dryRun {
		key = "/" + strings.TrimPrefix(key, layout.Root)
	}
	return apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf(
		"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %v, UID in object meta: %v",
		key, uid, stored))
}

// resourceVersionRequired is upstream's refusal of an update without a
// resourceVersion for a kind that requires one (its error names the
// resource as the kind).
func resourceVersionRequired(res *registry.Resource, name string) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: res.Group, Kind: res.Resource}, name,
		field.ErrorList{field.Invalid(field.NewPath("metadata", "resourceVersion"), uint64(0), "must be specified for an update")})
}
