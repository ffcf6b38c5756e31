package apiserver

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// Field sets of the objects a server writes itself, computed at build time.
//
// A fresh server creates ~180 objects (namespaces, RBAC policy, priority
// classes, flow schemas), each with the managedFields entry kube-apiserver
// records for them; the field manager's typed walk of each took ~25 ms of
// a fresh start's CPU. What a create from nothing records depends only on
// the object's kind and content and on the manager (see createdFields), so
// the caller may give a table of them (Config.BootstrapFieldSets, built by
// internal/server's TestBootstrapFieldSetsCurrent from the live
// computation). A miss, an object changed since the table was made,
// computes the set live.

// bootstrapFieldSetKey is the table's key of obj (to be created by
// manager, without managedFields): its kind, the manager, and the SHA-256
// of its protobuf encoding (deterministic: map keys sorted); false for an
// object without one.
func bootstrapFieldSetKey(obj runtime.Object, manager string) (string, bool) {
	m, ok := obj.(interface{ Marshal() ([]byte, error) })
	if !ok || len(accessor(obj).GetManagedFields()) != 0 {
		return "", false
	}
	data, err := m.Marshal()
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(data)
	return obj.GetObjectKind().GroupVersionKind().String() + "|" + manager + "|" + hex.EncodeToString(sum[:]), true
}

// recordBootstrapCreate records obj's fields as manager's create, from the
// table when it has them; with Config.OnBootstrapFieldSet it computes
// every set live and reports it.
func (s *Server) recordBootstrapCreate(res *registry.Resource, obj runtime.Object, manager string) runtime.Object {
	key, ok := bootstrapFieldSetKey(obj, manager)
	if ok && s.cfg.OnBootstrapFieldSet == nil {
		if set, hit := s.cfg.BootstrapFieldSets[key]; hit {
			return withFieldSet(obj, manager, set)
		}
	}
	obj = s.recordWrite(res, nil, obj, manager)
	if ok && s.cfg.OnBootstrapFieldSet != nil {
		s.cfg.OnBootstrapFieldSet(key, fieldSetOf(obj))
	}
	return obj
}

// fieldSetOf is the FieldsV1 of the one entry a create records ("" when it
// records none, as for an object of nothing but stripped metadata).
func fieldSetOf(obj runtime.Object) string {
	entries := accessor(obj).GetManagedFields()
	if len(entries) != 1 || entries[0].FieldsV1 == nil {
		return ""
	}
	return string(entries[0].FieldsV1.Raw)
}

// withFieldSet gives obj the entry the field manager records for a create
// by manager of the fields set (none for ""): an Update of obj's version,
// now.
func withFieldSet(obj runtime.Object, manager, set string) runtime.Object {
	if set == "" {
		return obj
	}
	now := metav1.Time{Time: time.Now().UTC()}
	accessor(obj).SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: obj.GetObjectKind().GroupVersionKind().GroupVersion().String(), Time: &now,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(set)}}})
	return obj
}
