package registry

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// pods is the Pod kind. A Pod sets its own initial status on create
// (preparePodForCreate reads a QoS class the client sent before resetting
// it), so its status rule is the plain subresource one.
func pods() descriptor {
	v1 := func(kind string) schema.GroupVersionKind { return schema.GroupVersionKind{Version: "v1", Kind: kind} }
	return descriptor{gv: "v1", resource: "pods", kind: "Pod", namespaced: true, short: []string{"po"}, categories: all,
		status: statusSubresource, generation: true, name: apivalidation.NameIsDNSSubdomain,
		fields: []string{"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
			"spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"},
		subresources: []Subresource{
			{Name: "attach", Kind: v1("PodAttachOptions"), Verbs: []string{"create", "get"}},
			{Name: "binding", Kind: v1("Binding"), Verbs: []string{"create"}},
			{Name: "ephemeralcontainers", Kind: v1("Pod"), Verbs: subVerbs},
			{Name: "eviction", Kind: schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}, Verbs: []string{"create"}},
			{Name: "exec", Kind: v1("PodExecOptions"), Verbs: []string{"create", "get"}},
			{Name: "log", Kind: v1("Pod"), Verbs: []string{"get"}},
			{Name: "portforward", Kind: v1("PodPortForwardOptions"), Verbs: []string{"create", "get"}},
			{Name: "proxy", Kind: v1("PodProxyOptions"), Verbs: []string{"create", "delete", "get", "patch", "update"}},
			{Name: "resize", Kind: v1("Pod"), Verbs: subVerbs},
		},
		strategy: Strategy{Default: defaultPod, PrepareForCreate: preparePodForCreate, PrepareForUpdate: preparePodForUpdate,
			Validate: validatePodStrategy, ValidateUpdate: validatePodUpdate, ResetStatusMetadata: resetStatusOwners, Warnings: podWarnings, PrepareWarnings: podAppArmorWarnings,
			Subresources: map[string]SubresourceStrategy{"resize": podResize, ephemeralContainersSubresource: podEphemeralContainers,
				"status": {Warnings: podStatusWarnings}}},
	}
}

func validatePodStrategy(obj runtime.Object) field.ErrorList {
	return validatePodCreate(obj.(*corev1.Pod))
}
