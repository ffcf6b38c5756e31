package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A claim without storageClassName may get one (the binder's default
// class), the one its beta annotation names if it has one; a class, once
// set, and the beta annotation are immutable.
func TestPVCClassUpgrade(t *testing.T) {
	claim := func(class *string, beta string) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ResourceVersion: "1"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: class, VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem),
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
		if beta != "" {
			c.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: beta}
		}
		return c
	}
	for _, tc := range []struct {
		name     string
		old, new *corev1.PersistentVolumeClaim
		ok       bool
	}{
		{"nil to a class", claim(nil, ""), claim(ptr.To("standard"), ""), true},
		{"nil to the annotated class", claim(nil, "gold"), claim(ptr.To("gold"), "gold"), true},
		{"nil to the annotated class, annotation dropped", claim(nil, "gold"), claim(ptr.To("gold"), ""), true},
		{"nil to another class than annotated", claim(nil, "gold"), claim(ptr.To("standard"), "gold"), false},
		{"a class changed", claim(ptr.To("gold"), ""), claim(ptr.To("standard"), ""), false},
		{"empty to a class", claim(ptr.To(""), ""), claim(ptr.To("standard"), ""), false},
		{"annotation changed", claim(nil, "gold"), claim(nil, "standard"), false},
	} {
		errs := validatePVCUpdate(tc.new, tc.old)
		if (len(errs) == 0) != tc.ok {
			t.Errorf("%s: errors %v, want ok %v", tc.name, errs, tc.ok)
		}
	}
}

// A bound claim's volume attributes class may change, but not go once one
// has been applied (upstream's ValidatePersistentVolumeClaimUpdate).
func TestPVCKeepsAppliedVolumeAttributesClass(t *testing.T) {
	claim := func(vac *string, applied bool) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ResourceVersion: "1"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To("standard"), VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem), VolumeAttributesClassName: vac,
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
		if applied {
			c.Status.CurrentVolumeAttributesClassName = ptr.To("gold")
		}
		return c
	}
	for _, tc := range []struct {
		name     string
		old, new *corev1.PersistentVolumeClaim
		want     string
	}{
		{"changed", claim(ptr.To("gold"), true), claim(ptr.To("silver"), true), ""},
		{"removed before applied", claim(ptr.To("gold"), false), claim(nil, false), ""},
		{"removed once applied", claim(ptr.To("gold"), true), claim(nil, true),
			"spec.volumeAttributesClassName: Forbidden: update to nil is forbidden when status.currentVolumeAttributesClassName is not nil"},
		{"emptied once applied", claim(ptr.To("gold"), true), claim(ptr.To(""), true),
			"spec.volumeAttributesClassName: Forbidden: update to empty string is forbidden when status.currentVolumeAttributesClassName is not nil"},
	} {
		got := ""
		if agg := validatePVCUpdate(tc.new, tc.old).ToAggregate(); agg != nil {
			got = agg.Error()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
