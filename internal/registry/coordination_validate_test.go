package registry

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Lease writes are checked as ValidateLease; the strategy and preferred
// holder (CoordinatedLeaderElection, off) are dropped unless stored.
func TestLeaseValidation(t *testing.T) {
	lease := func(edit func(*coordinationv1.LeaseSpec)) *coordinationv1.Lease {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: "kube-node-lease", ResourceVersion: "1", Finalizers: []string{"cleanup"}}}
		edit(&l.Spec)
		return l
	}
	bad := lease(func(s *coordinationv1.LeaseSpec) {
		s.LeaseDurationSeconds, s.LeaseTransitions = ptr.To(int32(0)), ptr.To(int32(-1))
		s.Strategy, s.PreferredHolder = ptr.To(coordinationv1.CoordinatedLeaseStrategy("Other")), ptr.To("n2")
	})
	want := "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0\nspec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"
	if got := errorLines(createErrors(t, bad)); got != want {
		t.Errorf("create:\n got %s\nwant %s", got, want)
	}
	if bad.Spec.Strategy != nil || bad.Spec.PreferredHolder != nil {
		t.Errorf("create kept strategy %v and preferred holder %v, want both dropped", bad.Spec.Strategy, bad.Spec.PreferredHolder)
	}
	stored := lease(func(s *coordinationv1.LeaseSpec) {
		s.Strategy = ptr.To(coordinationv1.CoordinatedLeaseStrategy("Other"))
	})
	update := lease(func(s *coordinationv1.LeaseSpec) {
		s.Strategy, s.PreferredHolder = ptr.To(coordinationv1.CoordinatedLeaseStrategy("Other")), ptr.To("n2")
	})
	want = `spec.strategy.strategy: Unsupported value: "Other": supported values: "OldestEmulationVersion"`
	if got := errorLines(updateErrors(t, update, stored)); got != want {
		t.Errorf("update:\n got %s\nwant %s", got, want)
	}
	if update.Spec.PreferredHolder != nil {
		t.Errorf("update kept preferred holder %q, want it dropped (none stored)", *update.Spec.PreferredHolder)
	}
	if r := resourceFor(t, stored); !r.AllowCreateOnUpdate || !r.Strategy.RequireResourceVersion {
		t.Errorf("leases: AllowCreateOnUpdate %v, RequireResourceVersion %v; want both (upstream's lease strategy)", r.AllowCreateOnUpdate, r.Strategy.RequireResourceVersion)
	}
}
