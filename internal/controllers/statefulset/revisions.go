package statefulset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// hashLabel is the label of a ControllerRevision that carries its hash.
const hashLabel = "controller.kubernetes.io/hash"

// RevisionPatch is what a StatefulSet's ControllerRevision stores: a
// strategic merge patch that replaces spec.template with the set's, its
// keys sorted (the set's JSON, decoded into maps, encoded again).
func RevisionPatch(set *appsv1.StatefulSet) ([]byte, error) {
	raw, err := json.Marshal(set.Spec.Template)
	if err != nil {
		return nil, err
	}
	var template map[string]any
	if err := json.Unmarshal(raw, &template); err != nil {
		return nil, err
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// HashRevision is the hash in a revision's name: FNV-32 of its data and
// the collision count, written as a decimal number and mapped to the
// characters of generated names.
func HashRevision(data []byte, collisionCount *int32) string {
	h := fnv.New32()
	h.Write(data)
	if collisionCount != nil {
		h.Write([]byte(strconv.FormatInt(int64(*collisionCount), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// RevisionName is "<set>-<hash>", the set's name cut to 223 characters.
func RevisionName(setName, hash string) string {
	if len(setName) > 223 {
		setName = setName[:223]
	}
	return setName + "-" + hash
}

// NewRevision is the ControllerRevision of the set's current spec, number
// revision: the template's labels and the set's annotations, controlled
// by the set, named after its hash.
func NewRevision(set *appsv1.StatefulSet, revision int64, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	patch, err := RevisionPatch(set)
	if err != nil {
		return nil, err
	}
	cr := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: patch}, Revision: revision}
	cr.Labels = make(map[string]string, len(set.Spec.Template.Labels)+1)
	for k, v := range set.Spec.Template.Labels {
		cr.Labels[k] = v
	}
	cr.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(set, controllerKind)}
	hash := HashRevision(patch, collisionCount)
	cr.Name = RevisionName(set.Name, hash)
	cr.Labels[hashLabel] = hash
	cr.Annotations = make(map[string]string, len(set.Annotations))
	for k, v := range set.Annotations {
		cr.Annotations[k] = v
	}
	return cr, nil
}

// ApplyRevision is set with the spec the revision records (its template),
// by applying its patch to the set.
func ApplyRevision(set *appsv1.StatefulSet, revision *appsv1.ControllerRevision) (*appsv1.StatefulSet, error) {
	clone := set.DeepCopy()
	original, err := json.Marshal(clone)
	if err != nil {
		return nil, err
	}
	patched, err := strategicpatch.StrategicMergePatch(original, revision.Data.Raw, clone)
	if err != nil {
		return nil, err
	}
	var restored appsv1.StatefulSet
	if err := json.Unmarshal(patched, &restored); err != nil {
		return nil, err
	}
	clone.Spec = restored.Spec
	return clone, nil
}

// equalRevision: both record the same data.
func equalRevision(a, b *appsv1.ControllerRevision) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.Data.Raw, b.Data.Raw)
}

// sortRevisions orders revisions by number, then creation time, then
// name.
func sortRevisions(revisions []*appsv1.ControllerRevision) {
	slices.SortStableFunc(revisions, func(a, b *appsv1.ControllerRevision) int {
		if a.Revision != b.Revision {
			if a.Revision < b.Revision {
				return -1
			}
			return 1
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			if a.CreationTimestamp.Before(&b.CreationTimestamp) {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// nextRevisionNumber is one more than the last of the sorted revisions',
// 1 for none.
func nextRevisionNumber(revisions []*appsv1.ControllerRevision) int64 {
	if len(revisions) == 0 {
		return 1
	}
	return revisions[len(revisions)-1].Revision + 1
}
