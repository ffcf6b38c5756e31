package pvbinder

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// A claim is bound to the smallest Available volume that fits, among
// those of the fewest access modes that include the claim's; both sides
// are written as upstream writes them.
func TestStaticBindBestFit(t *testing.T) {
	e := start(t)
	e.createVolumes(
		volume("big", "10Gi", rwo),
		volume("small", "2Gi", rwo),
		volume("tiny", "500Mi", rwo),
		// smaller, but of more access modes than the claim asks for
		volume("multi", "1Gi", rwoRWX),
	)
	created := e.createClaim(claim("data", "1Gi", rwo))
	c, v := e.waitBound("data")
	if v.Name != "small" {
		t.Fatalf("claim bound to %s, want small", v.Name)
	}
	if ref := v.Spec.ClaimRef; ref == nil || ref.Name != "data" || ref.Namespace != ns || ref.UID != created.UID || ref.Kind != "PersistentVolumeClaim" {
		t.Fatalf("volume claimRef %+v", ref)
	}
	if v.Annotations[storagehelpers.AnnBoundByController] != "yes" {
		t.Fatalf("volume annotations %v, want bound-by-controller", v.Annotations)
	}
	if v.Status.LastPhaseTransitionTime == nil {
		t.Fatal("volume has no lastPhaseTransitionTime")
	}
	if c.Annotations[storagehelpers.AnnBindCompleted] != "yes" || c.Annotations[storagehelpers.AnnBoundByController] != "yes" {
		t.Fatalf("claim annotations %v", c.Annotations)
	}
	if got := c.Status.Capacity[corev1.ResourceStorage]; got.Cmp(resource.MustParse("2Gi")) != 0 || !sameModes(c.Status.AccessModes, rwo) {
		t.Fatalf("claim status capacity %v modes %v, want the volume's", c.Status.Capacity, c.Status.AccessModes)
	}
	for _, name := range []string{"big", "tiny", "multi"} {
		e.waitVolumePhase(name, corev1.VolumeAvailable)
	}
	// a claim asking for both modes goes to the volume that has them
	e.createClaim(claim("shared", "1Gi", rwoRWX))
	if _, v := e.waitBound("shared"); v.Name != "multi" {
		t.Fatalf("claim asking RWO,RWX bound to %s, want multi", v.Name)
	}
	e.createClaim(claim("waiting", "100Gi", rwo))
	e.waitMetrics(`
# HELP pv_collector_bound_pv_count [ALPHA] Gauge measuring number of persistent volume currently bound
# TYPE pv_collector_bound_pv_count gauge
pv_collector_bound_pv_count{storage_class=""} 2
# HELP pv_collector_unbound_pv_count [ALPHA] Gauge measuring number of persistent volume currently unbound
# TYPE pv_collector_unbound_pv_count gauge
pv_collector_unbound_pv_count{storage_class=""} 2
# HELP pv_collector_total_pv_count [ALPHA] Gauge measuring total number of persistent volumes
# TYPE pv_collector_total_pv_count gauge
pv_collector_total_pv_count{plugin_name="kubernetes.io/host-path",volume_mode="Filesystem"} 4
# HELP pv_collector_bound_pvc_count [ALPHA] Gauge measuring number of persistent volume claim currently bound
# TYPE pv_collector_bound_pvc_count gauge
pv_collector_bound_pvc_count{namespace="default",storage_class="",volume_attributes_class=""} 2
# HELP pv_collector_unbound_pvc_count [ALPHA] Gauge measuring number of persistent volume claim currently unbound
# TYPE pv_collector_unbound_pvc_count gauge
pv_collector_unbound_pvc_count{namespace="default",storage_class="",volume_attributes_class=""} 1
`, "pv_collector_bound_pv_count", "pv_collector_unbound_pv_count", "pv_collector_total_pv_count", "pv_collector_bound_pvc_count", "pv_collector_unbound_pvc_count")
}

// A volume pre-bound to a claim by spec.claimRef is bound to it (rather
// than the best fit), keeping no bound-by-controller annotation; a claim
// naming a volume in spec.volumeName gets that one.
func TestPreBound(t *testing.T) {
	e := start(t)
	e.createVolumes(
		volume("fit", "1Gi", rwo),
		volume("reserved", "5Gi", rwo, func(v *corev1.PersistentVolume) {
			v.Spec.ClaimRef = &corev1.ObjectReference{Namespace: ns, Name: "wants-reserved"}
		}),
		volume("named", "3Gi", rwo),
	)
	e.waitVolumePhase("reserved", corev1.VolumeAvailable)
	e.createClaim(claim("wants-reserved", "1Gi", rwo))
	_, v := e.waitBound("wants-reserved")
	if v.Name != "reserved" {
		t.Fatalf("pre-bound claim bound to %s, want reserved", v.Name)
	}
	if hasAnnotation(v, storagehelpers.AnnBoundByController) {
		t.Fatalf("a volume the user pre-bound got %s", storagehelpers.AnnBoundByController)
	}
	if v.Spec.ClaimRef.UID == "" {
		t.Fatal("claimRef has no UID")
	}

	e.createClaim(claim("wants-named", "1Gi", rwo, func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "named" }))
	c, v := e.waitBound("wants-named")
	if v.Name != "named" || !hasAnnotation(v, storagehelpers.AnnBoundByController) {
		t.Fatalf("claim naming a volume bound to %s, annotations %v", v.Name, v.Annotations)
	}
	if hasAnnotation(c, storagehelpers.AnnBoundByController) || c.Annotations[storagehelpers.AnnBindCompleted] != "yes" {
		t.Fatalf("claim the user pre-bound has annotations %v", c.Annotations)
	}
	e.waitVolumePhase("fit", corev1.VolumeAvailable)
}

// A claim naming a volume that does not fit stays Pending with
// VolumeMismatch.
func TestPreBoundMismatch(t *testing.T) {
	e := start(t)
	e.createVolumes(volume("small", "1Gi", rwo))
	e.createClaim(claim("too-big", "2Gi", rwo, func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "small" }))
	e.waitEvent(ns, "PersistentVolumeClaim", "too-big", "VolumeMismatch", `Cannot bind to requested volume "small": requested PV is too small`)
	if c := e.getClaim("too-big"); c.Status.Phase != corev1.ClaimPending {
		t.Fatalf("claim phase %s", c.Status.Phase)
	}
}

// Claims of class "" that no volume fits (selector, class, volume mode,
// size) stay Pending with FailedBinding, and the volumes Available.
func TestMismatchesStayPending(t *testing.T) {
	e := start(t)
	e.createVolumes(
		volume("labelled", "5Gi", rwo, func(v *corev1.PersistentVolume) { v.Labels = map[string]string{"tier": "slow"} }),
		volume("gold", "5Gi", rwo, func(v *corev1.PersistentVolume) { v.Spec.StorageClassName = "gold" }),
	)
	block := corev1.PersistentVolumeBlock
	claims := []*corev1.PersistentVolumeClaim{
		claim("selector", "1Gi", rwo, func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}}
		}),
		claim("block", "1Gi", rwo, func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeMode = &block }),
		claim("huge", "10Gi", rwo),
	}
	for _, c := range claims {
		e.createClaim(c)
	}
	for _, c := range claims {
		e.waitEvent(ns, "PersistentVolumeClaim", c.Name, "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
	}
	e.stays("claims pending, volumes available", func() (bool, string) {
		for _, c := range claims {
			if got := e.getClaim(c.Name); got.Status.Phase != corev1.ClaimPending || got.Spec.VolumeName != "" {
				return false, c.Name + " is " + string(got.Status.Phase) + " on " + got.Spec.VolumeName
			}
		}
		for _, name := range []string{"labelled", "gold"} {
			if v := e.getVolume(name); v.Status.Phase != corev1.VolumeAvailable || v.Spec.ClaimRef != nil {
				return false, name + " is " + string(v.Status.Phase)
			}
		}
		return true, ""
	})
}

// A bound claim whose volume is deleted is Lost.
func TestClaimLost(t *testing.T) {
	e := start(t)
	e.createVolumes(volume("pv", "1Gi", rwo))
	e.createClaim(claim("data", "1Gi", rwo))
	e.waitBound("data")
	if err := e.admin.CoreV1().PersistentVolumes().Delete(ctx, "pv", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitEvent(ns, "PersistentVolumeClaim", "data", "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
	controllertest.Eventually(t, 5*time.Second, "claim Lost", func() (bool, string) {
		c := e.getClaim("data")
		return c.Status.Phase == corev1.ClaimLost && c.Status.Capacity == nil, string(c.Status.Phase)
	})
}
