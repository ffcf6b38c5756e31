package registry

import (
	schedulingv1 "k8s.io/api/scheduling/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
)

// otherKinds are the kinds of the remaining groups: metadata validation
// only, and the strategies hold just their decoding defaults, except for
// the RBAC kinds (rbac_defaults.go, rbac_validate.go), the
// networking.k8s.io kinds (networking_*.go), EndpointSlices
// (discovery_*.go) and events.k8s.io Events (core_event_validate.go). The
// certificates kinds are in certificates.go.
func otherKinds() []descriptor {
	dns := apivalidation.NameIsDNSSubdomain
	create := []string{"create"}
	return []descriptor{
		{gv: "coordination.k8s.io/v1", resource: "leases", kind: "Lease", namespaced: true, name: dns, createOnUpdate: true,
			strategy: Strategy{PrepareForCreate: prepareLeaseForCreate, PrepareForUpdate: prepareLeaseForUpdate, Validate: validateLease,
				ValidateUpdate: validateLeaseUpdate, RequireResourceVersion: true}},
		{gv: "discovery.k8s.io/v1", resource: "endpointslices", kind: "EndpointSlice", namespaced: true, name: dns, generation: true,
			strategy: Strategy{Default: defaultEndpointSlice, PrepareForCreate: prepareEndpointSliceForCreate,
				PrepareForUpdate: prepareEndpointSliceForUpdate, Validate: validateEndpointSlice, ValidateUpdate: validateEndpointSliceUpdate,
				Warnings: endpointSliceWarnings}},
		{gv: "events.k8s.io/v1", storedAs: "v1", resource: "events", kind: "Event", namespaced: true, short: []string{"ev"}, name: dns, gc: GCUnsupported,
			createOnUpdate: true, strategy: Strategy{GenericMetadata: true, Validate: validateEventsV1Event, ValidateUpdate: validateEventsV1EventUpdate},
			fields: []string{"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid", "regarding.apiVersion",
				"regarding.resourceVersion", "regarding.fieldPath", "reason", "reportingController", "type"}},
		{gv: "networking.k8s.io/v1", resource: "ingressclasses", kind: "IngressClass", name: dns, generation: true,
			strategy: Strategy{Default: defaultIngressClass, Validate: validateIngressClass, ValidateUpdate: validateIngressClassUpdate}},
		{gv: "networking.k8s.io/v1", resource: "ingresses", kind: "Ingress", namespaced: true, short: []string{"ing"},
			status: statusReset, generation: true, name: dns,
			strategy: Strategy{Validate: validateIngress, ValidateUpdate: validateIngressUpdate, Warnings: ingressWarnings,
				Subresources: map[string]SubresourceStrategy{"status": {ValidateUpdate: validateIngressStatusUpdate, Warnings: ingressStatusWarnings}}}},
		{gv: "networking.k8s.io/v1", resource: "ipaddresses", kind: "IPAddress", short: []string{"ip"}, name: ipAddressName,
			strategy: ipAddressStrategy()},
		{gv: "networking.k8s.io/v1", resource: "networkpolicies", kind: "NetworkPolicy", namespaced: true, short: []string{"netpol"},
			generation: true, name: dns, strategy: Strategy{Default: defaultNetworkPolicy, Validate: validateNetworkPolicy,
				ValidateUpdate: validateNetworkPolicyUpdate, Warnings: networkPolicyWarnings}},
		{gv: "networking.k8s.io/v1", resource: "servicecidrs", kind: "ServiceCIDR", name: dns, status: statusReset,
			strategy: serviceCIDRStrategy()},
		{gv: "node.k8s.io/v1", resource: "runtimeclasses", kind: "RuntimeClass", name: dns, createOnUpdate: true, strategy: Strategy{Validate: validateRuntimeClass,
			ValidateUpdate: validateRuntimeClassUpdate, Warnings: runtimeClassWarnings, RequireResourceVersion: true}},
		{gv: "policy/v1", resource: "poddisruptionbudgets", kind: "PodDisruptionBudget", namespaced: true, short: []string{"pdb"},
			status: statusSubresource, generation: true, name: dns, strategy: pdbStrategy()},
		{gv: "authentication.k8s.io/v1", resource: "selfsubjectreviews", kind: "SelfSubjectReview", verbs: create},
		{gv: "authentication.k8s.io/v1", resource: "tokenreviews", kind: "TokenReview", verbs: create},
		{gv: "authorization.k8s.io/v1", resource: "localsubjectaccessreviews", kind: "LocalSubjectAccessReview", namespaced: true, verbs: create},
		{gv: "authorization.k8s.io/v1", resource: "selfsubjectaccessreviews", kind: "SelfSubjectAccessReview", verbs: create},
		{gv: "authorization.k8s.io/v1", resource: "selfsubjectrulesreviews", kind: "SelfSubjectRulesReview", verbs: create},
		{gv: "authorization.k8s.io/v1", resource: "subjectaccessreviews", kind: "SubjectAccessReview", verbs: create},
		{gv: "rbac.authorization.k8s.io/v1", resource: "clusterrolebindings", kind: "ClusterRoleBinding", name: rbacName,
			createOnUpdate: true, strategy: clusterRoleBindingStrategy()},
		{gv: "rbac.authorization.k8s.io/v1", resource: "clusterroles", kind: "ClusterRole", name: rbacName,
			createOnUpdate: true, strategy: clusterRoleStrategy()},
		{gv: "rbac.authorization.k8s.io/v1", resource: "rolebindings", kind: "RoleBinding", namespaced: true, name: rbacName,
			createOnUpdate: true, strategy: roleBindingStrategy()},
		{gv: "rbac.authorization.k8s.io/v1", resource: "roles", kind: "Role", namespaced: true, name: rbacName,
			createOnUpdate: true, strategy: roleStrategy()},
		{gv: "scheduling.k8s.io/v1", resource: "priorityclasses", kind: "PriorityClass", short: []string{"pc"}, name: dns,
			strategy: Strategy{Default: defaultPriorityClass, Validate: validatePriorityClass, ValidateUpdate: validatePriorityClassUpdate,
				// generation 1 on create, as upstream's strategy, never bumped
				PrepareForCreate: func(obj runtime.Object) { obj.(*schedulingv1.PriorityClass).Generation = 1 }}},
	}
}
