package apiserver

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/pkg/admission"
)

// Upstream's warnings for an object whose ownerReferences repeat an entry,
// as written or after mutating admission.
const (
	duplicateOwnerReferencesWarning               = ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: %v"
	duplicateOwnerReferencesAfterAdmissionWarning = ".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: %v"
)

// dedupOwnerReferences drops the ownerReferences of obj that repeat an
// earlier one exactly and warns about them on record, as upstream's
// create and update handlers do before mutating admission and after it
// (a patch only after it).
func dedupOwnerReferences(obj runtime.Object, record *admission.Record, afterAdmission bool) {
	m, err := meta.Accessor(obj)
	if err != nil || len(m.GetOwnerReferences()) < 2 {
		return
	}
	refs := m.GetOwnerReferences()
	var kept []metav1.OwnerReference
	var duplicates []string
	seen := map[types.UID]bool{}
	for _, ref := range refs {
		if seen[ref.UID] && containsOwnerReference(kept, ref) {
			duplicates = append(duplicates, string(ref.UID))
			continue
		}
		seen[ref.UID] = true
		kept = append(kept, ref)
	}
	if len(duplicates) == 0 {
		return
	}
	format := duplicateOwnerReferencesWarning
	if afterAdmission {
		format = duplicateOwnerReferencesAfterAdmissionWarning
	}
	if record != nil {
		record.AddWarning(fmt.Sprintf(format, strings.Join(duplicates, ", ")))
	}
	m.SetOwnerReferences(kept)
}

func containsOwnerReference(refs []metav1.OwnerReference, ref metav1.OwnerReference) bool {
	for _, r := range refs {
		if equality.Semantic.DeepEqual(r, ref) {
			return true
		}
	}
	return false
}
