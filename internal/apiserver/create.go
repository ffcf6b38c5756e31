package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
)

// generateNameAttempts is how often a create with generateName retries a
// name that is taken, as upstream.
const generateNameAttempts = 8

func (s *Server) serveCreate(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	if s.serveSubCreate(w, r, rq, res) {
		return
	}
	if rq.info.Subresource != "" {
		writeError(w, r, errMethodNotAllowed())
		return
	}
	if s.serveReview(w, r, rq, res) {
		return
	}
	n, err := negotiateOutput(r, res)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, err := parseCreateOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, err := s.decodeWriteBody(r, rq, res, opts.FieldValidation)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.keepRequestObject(rq, obj)
	dedupOwnerReferences(obj, rq.record, false)
	ctx, timedOut, cancel := writeDeadline(r.Context())
	defer cancel()
	out, created, err := s.create(ctx, rq, res, obj, opts)
	if err = timedOut(err); err != nil {
		writeError(w, r, err)
		return
	}
	rq.event.ResponseObject = out
	if n.as != "" {
		s.writeResult(w, r, http.StatusCreated, res, out)
		return
	}
	writeObjectWithJSON(w, r, http.StatusCreated, out, created)
}

// decodeWriteBody reads and decodes a create or update body, applying the
// fieldValidation directive.
func (s *Server) decodeWriteBody(r *http.Request, rq *request, res *registry.Resource, fieldValidation string) (runtime.Object, error) {
	data, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	obj, strictErrs, err := decodeObject(res, mediaTypeOf(r), data)
	if err != nil {
		return nil, writeBodyError(res, data, err)
	}
	if err := strictDecoding(rq, fieldValidation, strictErrs); err != nil {
		return nil, cannotBeHandled(res, err)
	}
	return obj, nil
}

// cannotBeHandled is upstream's wording of a body that failed strict
// decoding: `<Kind> in version "<v>" cannot be handled as a <Kind>: ...`.
func cannotBeHandled(res *registry.Resource, err error) error {
	se, ok := err.(*apierrors.StatusError)
	if !ok {
		return err
	}
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", res.Kind, res.Version, res.Kind, se.ErrStatus.Message))
}

// create runs a create through defaulting, both admission phases,
// validation and storage. The returned object is what was stored (or would
// have been, on dry run).
//
// created is the JSON of the response when it can be taken from the stored
// bytes (see createdResponse), or nil.
func (s *Server) create(ctx context.Context, rq *request, res *registry.Resource, obj runtime.Object, opts *metav1.CreateOptions) (out runtime.Object, created []byte, err error) {
	m := accessor(obj)
	ns := objectNamespace(res, rq.info.Namespace)
	if err := ensureNamespace(ns, m); err != nil {
		return nil, nil, err
	}
	wipeSystemFields(m)
	res.Default(obj)
	obj = s.recordUpdate(rq, res, nil, obj, opts.FieldManager)
	dryRun := len(opts.DryRun) > 0
	attrs := s.attributes(rq, res, admission.Create, m.GetName(), obj, nil, opts, dryRun)
	if res.Group == "" && res.Resource == "namespaces" {
		attrs.Namespace = m.GetName()
	}
	if err := s.admit(ctx, attrs); err != nil {
		return nil, nil, err
	}
	obj = attrs.Object
	m = accessor(obj)
	if err := ensureNamespace(ns, m); err != nil {
		return nil, nil, err
	}
	obj, err = s.runWriteSteps(ctx, attrs, obj)
	if err != nil {
		return nil, nil, err
	}
	m = accessor(obj)
	generated := m.GetName() == "" && m.GetGenerateName() != ""
	for attempt := 0; ; attempt++ {
		out, created, err := s.createOnce(ctx, rq, res, obj, attrs, dryRun)
		if err == nil || !generated || !apierrors.IsAlreadyExists(err) || attempt+1 >= generateNameAttempts {
			return out, created, err
		}
		m.SetName("")
	}
}

// createOnce is upstream's store create: system fields, preparation,
// validation, validating admission, then the write.
func (s *Server) createOnce(ctx context.Context, rq *request, res *registry.Resource, obj runtime.Object, attrs *admission.Attributes, dryRun bool) (_ runtime.Object, created []byte, err error) {
	m := accessor(obj)
	s.fillSystemFields(res, m)
	undo, err := s.allocateForCreate(ctx, res, obj, dryRun)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil || dryRun {
			undo()
		}
	}()
	addWarnings(rq, res.PrepareWarnings(obj))
	registry.PrepareForCreateBy(res, obj, attrs.UserInfo)
	registry.PrepareForCreate(res, obj)
	if err := customTypeMetaError(res, obj); err != nil {
		return nil, nil, err
	}
	errs := s.runChecks(ctx, rq, res, obj, nil)
	if errs = append(errs, res.ValidateNew(obj)...); len(errs) > 0 {
		return nil, nil, invalid(res, obj, errs)
	}
	addWarnings(rq, res.Warnings(obj, nil))
	vattrs := *attrs
	vattrs.Object = obj
	vattrs.Name = m.GetName()
	if err := s.validate(ctx, &vattrs); err != nil {
		return nil, nil, err
	}
	key := layout.Key(res, m.GetNamespace(), m.GetName())
	if dryRun {
		// As upstream's dry-run storage: a name that is taken (as far as a
		// read can tell) is still a conflict.
		if _, err := s.store.Get(ctx, key); err == nil {
			return nil, nil, s.alreadyExists(ctx, res, key, m.GetName())
		}
		return obj, nil, nil
	}
	if m.GetResourceVersion() != "" {
		// upstream's storage refuses it (after validation and dry run) with
		// a plain error, hence a 500.
		return nil, nil, errors.New("resourceVersion should not be set on objects to be created")
	}
	stored, err := registry.ToStorageVersion(obj)
	if err != nil {
		return nil, nil, err
	}
	if stored, err = customToStorage(ctx, res, stored); err != nil {
		return nil, nil, err
	}
	data, err := layout.Encode(stored)
	if err != nil {
		return nil, nil, err
	}
	kv, err := s.store.Create(ctx, key, data)
	if errors.Is(err, storage.ErrTooLarge) && !rq.apply {
		data, err = withoutManagedFields(obj, stored)
		if err == nil {
			kv, err = s.store.Create(ctx, key, data)
		}
	}
	if errors.Is(err, storage.ErrKeyExists) {
		return nil, nil, s.alreadyExists(ctx, res, key, m.GetName())
	}
	if errors.Is(err, storage.ErrTooLarge) {
		return nil, nil, storage.ErrTooLarge // upstream's 500, etcd's text
	}
	if err != nil {
		return nil, nil, fmt.Errorf("storing %s: %w", m.GetName(), err)
	}
	m.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	if stored == obj {
		created, _ = createdResponse(data, m.GetUID(), kv.ModRevision)
	}
	s.afterWrite(ctx, WriteEvent{Resource: res.GroupVersionResource, Object: obj})
	out, err := fromStorage(ctx, res, obj, stored, kv.ModRevision)
	return out, created, err
}

// withoutManagedFields drops the managedFields of obj and of its storage
// form and encodes that again: upstream's second try at a write that
// storage refused as too large (every write but apply).
func withoutManagedFields(obj, stored runtime.Object) ([]byte, error) {
	accessor(obj).SetManagedFields(nil)
	accessor(stored).SetManagedFields(nil)
	return layout.Encode(stored)
}

// alreadyExists is the conflict of a create with the object at key, said
// as upstream's store says it: "object is being deleted: " first when that
// object is waiting for its finalizers.
func (s *Server) alreadyExists(ctx context.Context, res *registry.Resource, key, name string) error {
	err := apierrors.NewAlreadyExists(res.GroupResource(), name)
	if _, existing, getErr := s.readStored(ctx, res, key, name); getErr == nil && accessor(existing).GetDeletionTimestamp() != nil {
		err.ErrStatus.Message = "object is being deleted: " + err.ErrStatus.Message
	}
	return err
}
