package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
)

// parseDeleteOptions reads DeleteOptions from the body (JSON, YAML or
// protobuf) or, failing that, from the query.
func (s *Server) parseDeleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	data, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	if len(data) > 0 {
		mt := mediaTypeOf(r)
		if mt != mediaJSON && mt != mediaYAML && mt != mediaProtobuf {
			return nil, errUnsupportedMediaType(mt, mediaJSON, mediaYAML, mediaProtobuf)
		}
		if err := decodeDeleteOptions(mt, data, opts); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	} else if err := decodeOptions(r, opts); err != nil {
		return nil, err
	}
	if errs := metavalidation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	opts.TypeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "DeleteOptions"}
	return opts, nil
}

func decodeDeleteOptions(mt string, data []byte, opts *metav1.DeleteOptions) error {
	switch mt {
	case mediaProtobuf:
		gvk := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		_, _, err := protobufSerializer().Decode(data, &gvk, opts)
		return err
	case mediaYAML:
		if err := checkYAML(data); err != nil {
			return err
		}
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return err
		}
		data = j
	}
	if err := checkDeleteOptionsKind(data); err != nil {
		return err
	}
	// As upstream's (non-strict) serializer: keys match fields case-sensitively.
	return sigsjson.UnmarshalCaseSensitivePreserveInts(data, opts)
}

// checkDeleteOptionsKind reads the body's apiVersion and kind first, as
// upstream's decoder does: a body that is not JSON fails there, and one of
// another kind (with its version) is of a kind its options scheme lacks.
func checkDeleteOptionsKind(data []byte) error {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(data, &tm); err != nil {
		return fmt.Errorf("couldn't get version/kind; json parse error: %w", err)
	}
	if tm.Kind != "" && tm.Kind != "DeleteOptions" && tm.APIVersion != "" {
		return fmt.Errorf("no kind %q is registered for version %q in scheme %q", tm.Kind, tm.APIVersion, upstreamSchemeName)
	}
	return nil
}

func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	if rq.info.Subresource != "" {
		writeError(w, r, errMethodNotAllowed())
		return
	}
	n, err := negotiateOutput(r, res)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, err := s.parseDeleteOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ctx, timedOut, cancel := writeDeadline(r.Context())
	defer cancel()
	out, deleted, err := s.delete(ctx, rq, res, rq.info.Name, rq.info.Name, opts)
	if err = timedOut(err); err != nil {
		writeError(w, r, err)
		return
	}
	rq.event.ResponseObject = out
	if !deleted {
		// As upstream: the object that stays (finalizers, graceful
		// deletion, a terminating namespace) with 200, or 202 when the
		// client asked for orphanDependents=false.
		code := http.StatusOK
		if opts.OrphanDependents != nil && !*opts.OrphanDependents { //nolint:staticcheck // upstream still reads it
			code = http.StatusAccepted
		}
		s.writeDeleted(w, r, code, res, n, out)
		return
	}
	if res.ReturnsDeletedObject() {
		s.writeDeleted(w, r, http.StatusOK, res, n, out)
		return
	}
	m := accessor(out)
	writeObject(w, r, http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details:  &metav1.StatusDetails{Name: m.GetName(), Group: res.Group, Kind: res.Resource, UID: m.GetUID()},
	})
}

// writeDeleted writes the object a DELETE answers with, turned into what
// the Accept header asks (a Status never is).
func (s *Server) writeDeleted(w http.ResponseWriter, r *http.Request, code int, res *registry.Resource, n negotiated, out runtime.Object) {
	if n.as == "" {
		writeObject(w, r, code, out)
		return
	}
	s.writeResult(w, r, code, res, out)
}

// preconditionOnUID adds the object's uid to the delete's preconditions,
// as upstream's namespace storage does after mutating admission (so that
// validating admission sees it).
func preconditionOnUID(opts *metav1.DeleteOptions, m metav1.Object) {
	if opts.Preconditions == nil {
		opts.Preconditions = &metav1.Preconditions{}
	}
	if opts.Preconditions.UID == nil {
		uid := m.GetUID()
		opts.Preconditions.UID = &uid
	}
}

// delete admits and performs the deletion of one object. deleted is false
// when the object stays, marked for deletion, until its finalizers are gone.
// attrName is the name admission sees (empty for a collection delete).
func (s *Server) delete(ctx context.Context, rq *request, res *registry.Resource, name, attrName string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	key := layout.Key(res, objectNamespace(res, rq.info.Namespace), name)
	for {
		kv, old, err := s.readStored(ctx, res, key, name)
		if err != nil {
			return nil, false, err
		}
		if err := checkDeletePreconditions(res, old, opts.Preconditions); err != nil {
			return nil, false, err
		}
		warnDefaultOrphaning(rq, res, opts)
		attrs := s.attributes(rq, res, admission.Delete, attrName, nil, old.DeepCopyObject(), opts, len(opts.DryRun) > 0)
		if err := s.admit(ctx, attrs); err != nil {
			return nil, false, err
		}
		if res.Group == "" && res.Resource == "namespaces" {
			preconditionOnUID(opts, accessor(old))
		}
		if err := s.validate(ctx, attrs); err != nil {
			return nil, false, err
		}
		out, deleted, retry, err := s.commitDelete(ctx, res, key, kv.ModRevision, old, opts)
		if retry {
			continue
		}
		return out, deleted, err
	}
}

func (s *Server) commitDelete(ctx context.Context, res *registry.Resource, key string, rev int64, old runtime.Object, opts *metav1.DeleteOptions) (out runtime.Object, deleted, retry bool, err error) {
	m := accessor(old)
	dryRun := len(opts.DryRun) > 0
	obj := old.DeepCopyObject()
	var graceful, pending bool
	if s.cfg.GracefulPodDeletion {
		graceful, pending = gracefulPodDelete(obj, opts, s.cfg.Now())
	}
	if pending {
		return old, false, false, nil
	}
	finalizersChanged := setGCFinalizers(res, accessor(obj), opts)
	waiting := graceful && *accessor(obj).GetDeletionGracePeriodSeconds() > 0
	if hasFinalizers(res, obj) || waiting {
		if !graceful && m.GetDeletionTimestamp() != nil && !finalizersChanged {
			return old, false, false, nil
		}
		if !graceful {
			markDeleting(res, obj, s.cfg.Now())
		}
		if dryRun {
			return obj, false, false, nil
		}
		data, err := encodeForStorage(ctx, res, obj)
		if err != nil {
			return nil, false, false, err
		}
		kv, err := s.store.Update(ctx, key, data, rev)
		if errors.Is(err, storage.ErrConflict) {
			return nil, false, true, nil
		}
		if err != nil {
			return nil, false, false, err
		}
		accessor(obj).SetResourceVersion(fmt.Sprint(kv.ModRevision))
		// Marked, not gone: an update the observers must see before the
		// request returns (a namespace is Terminating from now on).
		s.afterWrite(ctx, WriteEvent{Resource: res.GroupVersionResource, Object: obj})
		return obj, false, false, nil
	}
	if dryRun {
		return old, true, false, nil
	}
	_, _, err = s.store.Delete(ctx, key, rev)
	if errors.Is(err, storage.ErrConflict) {
		return nil, false, true, nil
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, false, false, errNotFound(res, m.GetName())
	}
	if err != nil {
		return nil, false, false, err
	}
	if crd, ok := old.(*apiextensionsv1.CustomResourceDefinition); ok {
		if err := s.deleteCustomObjects(ctx, crd); err != nil {
			s.log.Error("deleting custom objects", "crd", crd.Name, "err", err)
		}
	}
	s.afterWrite(ctx, WriteEvent{Resource: res.GroupVersionResource, Deleted: true, Object: old})
	return old, true, false, nil
}

// checkDeletePreconditions checks a delete's preconditions as upstream's
// rest.BeforeDelete words them (the conflict names the kind), but for a
// namespace, whose storage checks them itself (checkPreconditions).
func checkDeletePreconditions(res *registry.Resource, obj runtime.Object, p *metav1.Preconditions) error {
	if p == nil || (res.Group == "" && res.Resource == "namespaces") {
		return checkPreconditions(res, obj, p)
	}
	m, gk := accessor(obj), schema.GroupResource{Group: kindGroup(res), Resource: res.Kind}
	if p.UID != nil && *p.UID != m.GetUID() {
		return apierrors.NewConflict(gk, m.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return apierrors.NewConflict(gk, m.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

// checkPreconditions checks preconditions as upstream's storage words
// them (a namespace's delete, a pod's binding).
func checkPreconditions(res *registry.Resource, obj runtime.Object, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	m := accessor(obj)
	if p.UID != nil && *p.UID != m.GetUID() {
		return apierrors.NewConflict(res.GroupResource(), m.GetName(),
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return apierrors.NewConflict(res.GroupResource(), m.GetName(),
			fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

func (s *Server) serveDeleteCollection(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	opts, err := s.parseDeleteOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	lq, err := parseListQuery(res, r.URL.Query())
	if err != nil {
		writeError(w, r, err)
		return
	}
	lq.limit, lq.continueToken = 0, ""
	items, lm, err := s.listObjects(r.Context(), res, rq.info.Namespace, lq)
	if err != nil {
		writeError(w, r, err)
		return
	}
	for _, it := range items {
		m := accessor(it)
		sub := *rq
		info := *rq.info
		info.Namespace = m.GetNamespace()
		sub.info = &info
		if _, _, err := s.delete(r.Context(), &sub, res, m.GetName(), "", opts); err != nil && !apierrors.IsNotFound(err) {
			writeError(w, r, err)
			return
		}
	}
	// As upstream, the answer is the list as it was read, before the
	// deletions: deletion fields a delete set (a finalizer, a timestamp)
	// are not in it.
	for _, it := range items {
		if !res.Unstructured {
			it.GetObjectKind().SetGroupVersionKind(emptyGVK)
		}
	}
	if items == nil {
		items = []runtime.Object{}
	}
	writeObject(w, r, http.StatusOK, &listResponse{Kind: res.ListKind, APIVersion: res.GroupVersion().String(), Metadata: listMetadata(res, lm), Items: items})
}

// kindGroup is the group upstream's rest.BeforeDelete names res's kind in:
// the first its scheme registers the kind in, which for the Event of
// events.k8s.io is the core group.
func kindGroup(res *registry.Resource) string {
	if res.Group == "events.k8s.io" && res.Kind == "Event" {
		return ""
	}
	return res.Group
}
