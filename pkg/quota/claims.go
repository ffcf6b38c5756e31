package quota

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

var claimsResource = schema.GroupResource{Resource: "persistentvolumeclaims"}

// storageClassSuffix joins a storage class name and a claim resource name
// (<class>.storageclass.storage.k8s.io/requests.storage).
const storageClassSuffix = ".storageclass.storage.k8s.io/"

var claimNames = []corev1.ResourceName{corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage}

type claims struct{ opts Options }

// NewClaims returns the persistent volume claim evaluator: claims and
// storage, in total and per storage class.
func NewClaims(opts Options) Evaluator { return &claims{opts: opts} }

func (c *claims) GroupResource() schema.GroupResource { return claimsResource }

// Handles creates and updates of claims, and status updates that may
// change the usage.
func (c *claims) Handles(a *admission.Attributes) bool {
	switch a.Subresource {
	case "":
		return a.Operation == admission.Create || a.Operation == admission.Update
	case "status":
		pvc, ok1 := a.Object.(*corev1.PersistentVolumeClaim)
		old, ok2 := a.OldObject.(*corev1.PersistentVolumeClaim)
		if !ok1 || !ok2 {
			return false
		}
		return c.replenishes(pvc, old)
	}
	return false
}

// replenishes is upstream's RequiresQuotaReplenish. Upstream compares the
// allocated storage quantities by pointer, which always differ: with
// RecoverVolumeExpansionFailure every status update is handled.
func (c *claims) replenishes(pvc, old *corev1.PersistentVolumeClaim) bool {
	if c.opts.RecoverVolumeExpansionFailure {
		return true
	}
	if c.opts.VolumeAttributesClass {
		return !sameStrings(attributeClasses(pvc), attributeClasses(old))
	}
	return false
}

func (c *claims) scopeFunc() ScopeFunc {
	if c.opts.VolumeAttributesClass {
		return claimScope
	}
	return noScopes
}

func (c *claims) Matches(q *corev1.ResourceQuota, obj runtime.Object) (bool, error) {
	return matches(q, obj, claimTracks, c.scopeFunc())
}

func (c *claims) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	out := []corev1.ResourceName{}
	for _, n := range input {
		if claimTracks(n) {
			out = append(out, n)
		}
	}
	return out
}

var claimsCount = ObjectCountName(claimsResource)

// claimTracks reports whether the claim evaluator tracks n: the claim
// count, claims and storage, in total or of a class.
func claimTracks(n corev1.ResourceName) bool {
	return n == claimsCount || containsName(claimNames, n) ||
		strings.HasSuffix(string(n), storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims)) ||
		strings.HasSuffix(string(n), storageClassSuffix+string(corev1.ResourceRequestsStorage))
}

func (c *claims) MatchingScopes(obj runtime.Object, sels []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	if !c.opts.VolumeAttributesClass {
		return []corev1.ScopedResourceSelectorRequirement{}, nil
	}
	out := []corev1.ScopedResourceSelectorRequirement{}
	for _, sel := range sels {
		ok, err := claimScope(sel, obj)
		if err != nil {
			return []corev1.ScopedResourceSelectorRequirement{}, fmt.Errorf("error on matching scope %v: %w", sel, err)
		}
		if ok {
			out = append(out, sel)
		}
	}
	return out, nil
}

func (c *claims) UncoveredScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) []corev1.ScopedResourceSelectorRequirement {
	if !c.opts.VolumeAttributesClass {
		return []corev1.ScopedResourceSelectorRequirement{}
	}
	return uncoveredByName(limited, matched)
}

func (c *claims) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

// Usage charges one claim (also to its class) and its storage, rounded up
// to whole bytes (also to its class).
func (c *claims) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return corev1.ResourceList{}, fmt.Errorf("expect *api.PersistentVolumeClaim or *v1.PersistentVolumeClaim, got %v", obj)
	}
	out := corev1.ResourceList{
		corev1.ResourcePersistentVolumeClaims: one(),
		ObjectCountName(claimsResource):       one(),
	}
	class := claimClass(pvc)
	if class != "" {
		out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one()
	}
	if s := c.storage(pvc); s != nil {
		out[corev1.ResourceRequestsStorage] = *s
		if class != "" {
			out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = *s
		}
	}
	return out, nil
}

// storage is the requested storage rounded up to whole bytes, or the
// allocated storage when larger (RecoverVolumeExpansionFailure); nil when
// the claim requests none.
func (c *claims) storage(pvc *corev1.PersistentVolumeClaim) *resource.Quantity {
	req, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return nil
	}
	out := roundUp(req)
	if !c.opts.RecoverVolumeExpansionFailure {
		return &out
	}
	if alloc, ok := pvc.Status.AllocatedResources[corev1.ResourceStorage]; ok && alloc.Cmp(out) > 0 {
		out = roundUp(alloc)
	}
	return &out
}

func roundUp(q resource.Quantity) resource.Quantity {
	r := q.DeepCopy()
	r.RoundUp(0)
	return r
}

// claimClass is the claim's storage class: spec.storageClassName, else the
// beta annotation.
func claimClass(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}

// attributeClasses are the volume attributes classes a claim names, in its
// spec, its status and its pending modification.
func attributeClasses(pvc *corev1.PersistentVolumeClaim) []string {
	var out []string
	add := func(s string) {
		if s != "" && !containsString(out, s) {
			out = append(out, s)
		}
	}
	if pvc.Spec.VolumeAttributesClassName != nil {
		add(*pvc.Spec.VolumeAttributesClassName)
	}
	if pvc.Status.CurrentVolumeAttributesClassName != nil {
		add(*pvc.Status.CurrentVolumeAttributesClassName)
	}
	if m := pvc.Status.ModifyVolumeStatus; m != nil {
		add(m.TargetVolumeAttributesClassName)
	}
	return out
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !containsString(b, x) {
			return false
		}
	}
	return true
}

// claimScope is the VolumeAttributesClass scope: Exists selects claims
// naming a class; other operators are label selectors on
// VolumeAttributesClass=<class>, true when any named class matches.
func claimScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return false, fmt.Errorf("expect *api.PersistentVolumeClaim or *v1.PersistentVolumeClaim, got %v", obj)
	}
	if sel.ScopeName != corev1.ResourceQuotaScopeVolumeAttributesClass {
		return false, nil
	}
	names := attributeClasses(pvc)
	if sel.Operator == corev1.ScopeSelectorOpExists {
		return len(names) != 0, nil
	}
	s, err := selectorFor(sel)
	if err != nil {
		return false, fmt.Errorf("failed to parse and convert selector: %w", err)
	}
	if len(names) == 0 {
		return s.Matches(labels.Set{}), nil
	}
	for _, n := range names {
		if s.Matches(labels.Set{string(corev1.ResourceQuotaScopeVolumeAttributesClass): n}) {
			return true, nil
		}
	}
	return false, nil
}
