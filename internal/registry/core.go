package registry

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// coreKinds are the core (v1) kinds. Their strategies live in the core_*.go
// files (core_pods*.go for Pods).
func coreKinds() []descriptor {
	return []descriptor{
		{gv: "v1", resource: "bindings", kind: "Binding", namespaced: true, verbs: []string{"create"}},
		{gv: "v1", resource: "componentstatuses", kind: "ComponentStatus", short: []string{"cs"}, verbs: []string{"get", "list"}},
		{gv: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true, short: []string{"cm"}, name: apivalidation.NameIsDNSSubdomain,
			strategy: Strategy{Default: defaultConfigMap, Validate: validateConfigMap, ValidateUpdate: validateConfigMapUpdate}},
		{gv: "v1", resource: "endpoints", kind: "Endpoints", namespaced: true, short: []string{"ep"}, name: apivalidation.NameIsDNSSubdomain, createOnUpdate: true,
			strategy: Strategy{Default: defaultEndpoints, Validate: validateEndpoints, ValidateUpdate: validateEndpointsUpdate, Warnings: endpointsWarnings}},
		{gv: "v1", resource: "events", kind: "Event", namespaced: true, short: []string{"ev"}, gc: GCUnsupported, createOnUpdate: true,
			strategy: Strategy{GenericMetadata: true, Validate: validateCoreEvent, ValidateUpdate: validateCoreEventUpdate},
			fields: []string{"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
				"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}},
		{gv: "v1", resource: "limitranges", kind: "LimitRange", namespaced: true, short: []string{"limits"}, name: apivalidation.NameIsDNSSubdomain,
			createOnUpdate: true, strategy: Strategy{Default: defaultLimitRange, PrepareForCreate: prepareLimitRangeForCreate,
				Validate: validateLimitRange, ValidateUpdate: validateLimitRangeUpdate}},
		namespaces(),
		{gv: "v1", resource: "nodes", kind: "Node", short: []string{"no"}, status: statusSubresource, name: apivalidation.NameIsDNSSubdomain,
			fields: []string{"spec.unschedulable"}, strictFields: true, subresources: []Subresource{{Name: "proxy",
				Kind: schema.GroupVersionKind{Version: "v1", Kind: "NodeProxyOptions"}, Verbs: []string{"create", "delete", "get", "patch", "update"}}},
			strategy: Strategy{Default: defaultNode, PrepareForCreate: prepareNodeForCreate, PrepareForUpdate: prepareNodeForUpdate,
				PrepareForSubresourceUpdate: prepareNodeForStatusUpdate, Validate: validateNode, ValidateUpdate: validateNodeUpdate,
				Warnings: nodeWarnings, Subresources: map[string]SubresourceStrategy{"status": {ValidateUpdate: validateNodeStatusUpdate}}}},
		{gv: "v1", resource: "persistentvolumeclaims", kind: "PersistentVolumeClaim", namespaced: true, short: []string{"pvc"},
			status: statusReset, name: apivalidation.NameIsDNSSubdomain,
			strategy: Strategy{Default: defaultPVC, PrepareForCreate: preparePVCForCreate, Validate: validatePVC, ValidateUpdate: validatePVCUpdate,
				Warnings: pvcWarnings}},
		{gv: "v1", resource: "persistentvolumes", kind: "PersistentVolume", short: []string{"pv"}, status: statusReset, name: apivalidation.NameIsDNSSubdomain,
			strategy: persistentVolumeStrategy()},
		pods(),
		{gv: "v1", resource: "podtemplates", kind: "PodTemplate", namespaced: true, generation: true, name: apivalidation.NameIsDNSSubdomain,
			strategy: Strategy{Default: defaultPodTemplate, Validate: validatePodTemplate, ValidateUpdate: validatePodTemplateUpdate,
				Warnings: podTemplateWarnings}},
		{gv: "v1", resource: "replicationcontrollers", kind: "ReplicationController", namespaced: true, short: []string{"rc"}, categories: all,
			status: statusReset, generation: true, subresources: []Subresource{scaleSub()}, name: apivalidation.NameIsDNSSubdomain,
			gc:     OrphanDependents, // "for backwards compatibility"
			fields: []string{"status.replicas"},
			strategy: Strategy{Default: defaultReplicationController, Validate: validateReplicationController,
				ValidateUpdate: validateReplicationControllerUpdate, Warnings: replicationControllerWarnings}},
		{gv: "v1", resource: "resourcequotas", kind: "ResourceQuota", namespaced: true, short: []string{"quota"}, status: statusReset,
			name: apivalidation.NameIsDNSSubdomain, strategy: Strategy{Default: defaultResourceQuota, Validate: validateResourceQuota,
				ValidateUpdate: validateResourceQuotaUpdate, Warnings: resourceQuotaWarnings,
				Subresources: map[string]SubresourceStrategy{"status": {ValidateUpdate: validateResourceQuotaStatusUpdate}}}},
		{gv: "v1", resource: "secrets", kind: "Secret", namespaced: true, name: apivalidation.NameIsDNSSubdomain, fields: []string{"type"},
			strategy: Strategy{Default: defaultSecret, Validate: validateSecret, ValidateUpdate: validateSecretUpdate, Warnings: secretWarnings}},
		serviceAccounts(),
		services(),
	}
}

func namespaces() descriptor {
	return descriptor{gv: "v1", resource: "namespaces", kind: "Namespace", short: []string{"ns"}, status: statusReset,
		subresources: []Subresource{{Name: "finalize", Kind: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, Verbs: []string{"update"}}},
		verbs:        []string{"create", "delete", "get", "list", "patch", "update", "watch"},
		name:         apivalidation.ValidateNamespaceName,
		fields:       []string{"status.phase"},
		strictFields: true,
		strategy: Strategy{Default: defaultNamespace, PrepareForCreate: prepareNamespaceForCreate, PrepareForUpdate: prepareNamespaceForUpdate,
			Validate: validateNamespace, ValidateUpdate: validateNamespaceUpdate}}
}

func serviceAccounts() descriptor {
	return descriptor{gv: "v1", resource: "serviceaccounts", kind: "ServiceAccount", namespaced: true, short: []string{"sa"},
		subresources: []Subresource{{Name: "token", Kind: schema.GroupVersionKind{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest"},
			Verbs: []string{"create"}}},
		name: apivalidation.ValidateServiceAccountName,
		strategy: Strategy{PrepareForCreate: cleanServiceAccountSecrets,
			PrepareForUpdate: func(obj, _ runtime.Object) { cleanServiceAccountSecrets(obj) }, Warnings: serviceAccountWarnings}}
}

func services() descriptor {
	return descriptor{gv: "v1", resource: "services", kind: "Service", namespaced: true, short: []string{"svc"}, categories: all, status: statusReset, createOnUpdate: true,
		subresources: []Subresource{{Name: "proxy", Kind: schema.GroupVersionKind{Version: "v1", Kind: "ServiceProxyOptions"},
			Verbs: []string{"create", "delete", "get", "patch", "update"}}},
		name: apivalidation.NameIsDNS1035Label, fields: []string{"spec.clusterIP", "spec.type"},
		strategy: Strategy{Default: defaultService, PrepareForCreate: prepareServiceForCreate, PrepareForUpdate: prepareServiceForUpdate,
			Validate: validateService, ValidateUpdate: validateServiceUpdate, Warnings: serviceWarnings,
			Subresources: map[string]SubresourceStrategy{"status": {ValidateUpdate: validateServiceStatusUpdate, Warnings: serviceStatusWarnings}}}}
}
