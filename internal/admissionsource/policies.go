package admissionsource

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/storage"
)

// The resources of admission policies and their bindings.
var (
	validatingPoliciesGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies")
	validatingBindingsGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings")
	mutatingPoliciesGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies")
	mutatingBindingsGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings")
)

// policyResources are the resources whose writes change the snapshot.
var policyResources = []schema.GroupVersionResource{validatingPoliciesGVR, validatingBindingsGVR, mutatingPoliciesGVR, mutatingBindingsGVR}

// PolicyConfigs keeps the admission policies and bindings of storage as the
// snapshot the policy plugins read. Params are not cached: the plugins read
// them through a ParamLookup at each request.
type PolicyConfigs = ConfigCache[policies.Snapshot]

var _ policies.Source = (*PolicyConfigs)(nil)

// NewPolicyConfigs returns an empty cache; call Reload before serving.
func NewPolicyConfigs(store storage.Store, cat *registry.Catalogue) *PolicyConfigs {
	return NewConfigCache(store, cat, policyResources, policySnapshot)
}

func policySnapshot(objs []runtime.Object) *policies.Snapshot {
	snap := &policies.Snapshot{}
	for _, obj := range objs {
		snap.Add(obj)
	}
	return snap
}
