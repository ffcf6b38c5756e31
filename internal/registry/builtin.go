package registry

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// StandardVerbs are the verbs of an ordinary resource.
var StandardVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

var subVerbs = []string{"get", "patch", "update"}

// res is a compact description used to build the built-in table.
type res struct {
	gv         string
	resource   string
	kind       string
	namespaced bool
	short      []string
	categories []string
	status     bool
	generation bool
	extraSubs  []Subresource
	verbs      []string
	// storage is the version stored when it is not gv's.
	storage string
}

var all = []string{"all"}

func scaleSub() Subresource {
	return Subresource{Name: "scale", Kind: schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Verbs: subVerbs}
}

// builtinResources lists the built-in resources in discovery order.
var builtinResources = []res{
	{gv: "v1", resource: "bindings", kind: "Binding", namespaced: true, verbs: []string{"create"}},
	{gv: "v1", resource: "componentstatuses", kind: "ComponentStatus", short: []string{"cs"}, verbs: []string{"get", "list"}},
	{gv: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true, short: []string{"cm"}},
	{gv: "v1", resource: "endpoints", kind: "Endpoints", namespaced: true, short: []string{"ep"}},
	{gv: "v1", resource: "events", kind: "Event", namespaced: true, short: []string{"ev"}},
	{gv: "v1", resource: "limitranges", kind: "LimitRange", namespaced: true, short: []string{"limits"}},
	{gv: "v1", resource: "namespaces", kind: "Namespace", short: []string{"ns"}, status: true,
		extraSubs: []Subresource{{Name: "finalize", Kind: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, Verbs: []string{"update"}}},
		verbs:     []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
	{gv: "v1", resource: "nodes", kind: "Node", short: []string{"no"}, status: true},
	{gv: "v1", resource: "persistentvolumeclaims", kind: "PersistentVolumeClaim", namespaced: true, short: []string{"pvc"}, status: true},
	{gv: "v1", resource: "persistentvolumes", kind: "PersistentVolume", short: []string{"pv"}, status: true},
	{gv: "v1", resource: "pods", kind: "Pod", namespaced: true, short: []string{"po"}, categories: all, status: true, generation: true,
		extraSubs: []Subresource{
			{Name: "attach", Kind: schema.GroupVersionKind{Version: "v1", Kind: "PodAttachOptions"}, Verbs: []string{"create", "get"}},
			{Name: "binding", Kind: schema.GroupVersionKind{Version: "v1", Kind: "Binding"}, Verbs: []string{"create"}},
			{Name: "ephemeralcontainers", Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Verbs: subVerbs},
			{Name: "eviction", Kind: schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}, Verbs: []string{"create"}},
			{Name: "exec", Kind: schema.GroupVersionKind{Version: "v1", Kind: "PodExecOptions"}, Verbs: []string{"create", "get"}},
			{Name: "log", Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Verbs: []string{"get"}},
			{Name: "portforward", Kind: schema.GroupVersionKind{Version: "v1", Kind: "PodPortForwardOptions"}, Verbs: []string{"create", "get"}},
			{Name: "proxy", Kind: schema.GroupVersionKind{Version: "v1", Kind: "PodProxyOptions"}, Verbs: []string{"create", "delete", "get", "patch", "update"}},
			{Name: "resize", Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Verbs: subVerbs},
		}},
	{gv: "v1", resource: "podtemplates", kind: "PodTemplate", namespaced: true},
	{gv: "v1", resource: "replicationcontrollers", kind: "ReplicationController", namespaced: true, short: []string{"rc"}, categories: all, status: true, generation: true, extraSubs: []Subresource{scaleSub()}},
	{gv: "v1", resource: "resourcequotas", kind: "ResourceQuota", namespaced: true, short: []string{"quota"}, status: true},
	{gv: "v1", resource: "secrets", kind: "Secret", namespaced: true},
	{gv: "v1", resource: "serviceaccounts", kind: "ServiceAccount", namespaced: true, short: []string{"sa"},
		extraSubs: []Subresource{{Name: "token", Kind: schema.GroupVersionKind{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest"}, Verbs: []string{"create"}}}},
	{gv: "v1", resource: "services", kind: "Service", namespaced: true, short: []string{"svc"}, categories: all, status: true,
		verbs:     []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
		extraSubs: []Subresource{{Name: "proxy", Kind: schema.GroupVersionKind{Version: "v1", Kind: "ServiceProxyOptions"}, Verbs: []string{"create", "delete", "get", "patch", "update"}}}},

	{gv: "admissionregistration.k8s.io/v1", resource: "mutatingadmissionpolicies", kind: "MutatingAdmissionPolicy", categories: []string{"api-extensions"}, generation: true},
	{gv: "admissionregistration.k8s.io/v1", resource: "mutatingadmissionpolicybindings", kind: "MutatingAdmissionPolicyBinding", categories: []string{"api-extensions"}, generation: true},
	{gv: "admissionregistration.k8s.io/v1", resource: "mutatingwebhookconfigurations", kind: "MutatingWebhookConfiguration", categories: []string{"api-extensions"}},
	{gv: "admissionregistration.k8s.io/v1", resource: "validatingadmissionpolicies", kind: "ValidatingAdmissionPolicy", categories: []string{"api-extensions"}, status: true, generation: true},
	{gv: "admissionregistration.k8s.io/v1", resource: "validatingadmissionpolicybindings", kind: "ValidatingAdmissionPolicyBinding", categories: []string{"api-extensions"}, generation: true},
	{gv: "admissionregistration.k8s.io/v1", resource: "validatingwebhookconfigurations", kind: "ValidatingWebhookConfiguration", categories: []string{"api-extensions"}},

	{gv: "apiextensions.k8s.io/v1", resource: "customresourcedefinitions", kind: "CustomResourceDefinition", short: []string{"crd", "crds"}, categories: []string{"api-extensions"}, status: true},

	{gv: "apps/v1", resource: "controllerrevisions", kind: "ControllerRevision", namespaced: true},
	{gv: "apps/v1", resource: "daemonsets", kind: "DaemonSet", namespaced: true, short: []string{"ds"}, categories: all, status: true, generation: true},
	{gv: "apps/v1", resource: "deployments", kind: "Deployment", namespaced: true, short: []string{"deploy"}, categories: all, status: true, generation: true, extraSubs: []Subresource{scaleSub()}},
	{gv: "apps/v1", resource: "replicasets", kind: "ReplicaSet", namespaced: true, short: []string{"rs"}, categories: all, status: true, generation: true, extraSubs: []Subresource{scaleSub()}},
	{gv: "apps/v1", resource: "statefulsets", kind: "StatefulSet", namespaced: true, short: []string{"sts"}, categories: all, status: true, generation: true, extraSubs: []Subresource{scaleSub()}},

	{gv: "autoscaling/v2", resource: "horizontalpodautoscalers", kind: "HorizontalPodAutoscaler", namespaced: true, short: []string{"hpa"}, categories: all, status: true},
	{gv: "autoscaling/v1", resource: "horizontalpodautoscalers", kind: "HorizontalPodAutoscaler", namespaced: true, short: []string{"hpa"}, categories: all, status: true, storage: "v2"},

	{gv: "batch/v1", resource: "cronjobs", kind: "CronJob", namespaced: true, short: []string{"cj"}, categories: all, status: true, generation: true},
	{gv: "batch/v1", resource: "jobs", kind: "Job", namespaced: true, categories: all, status: true, generation: true},

	{gv: "certificates.k8s.io/v1", resource: "certificatesigningrequests", kind: "CertificateSigningRequest", short: []string{"csr"}, status: true,
		extraSubs: []Subresource{{Name: "approval", Kind: schema.GroupVersionKind{Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequest"}, Verbs: subVerbs}}},
	{gv: "coordination.k8s.io/v1", resource: "leases", kind: "Lease", namespaced: true},
	{gv: "discovery.k8s.io/v1", resource: "endpointslices", kind: "EndpointSlice", namespaced: true},
	{gv: "events.k8s.io/v1", resource: "events", kind: "Event", namespaced: true, short: []string{"ev"}},
	{gv: "networking.k8s.io/v1", resource: "ingressclasses", kind: "IngressClass"},
	{gv: "networking.k8s.io/v1", resource: "ingresses", kind: "Ingress", namespaced: true, short: []string{"ing"}, status: true, generation: true},
	{gv: "networking.k8s.io/v1", resource: "networkpolicies", kind: "NetworkPolicy", namespaced: true, short: []string{"netpol"}, generation: true},
	{gv: "node.k8s.io/v1", resource: "runtimeclasses", kind: "RuntimeClass"},
	{gv: "policy/v1", resource: "poddisruptionbudgets", kind: "PodDisruptionBudget", namespaced: true, short: []string{"pdb"}, status: true, generation: true},
	{gv: "authentication.k8s.io/v1", resource: "selfsubjectreviews", kind: "SelfSubjectReview", verbs: []string{"create"}},
	{gv: "authentication.k8s.io/v1", resource: "tokenreviews", kind: "TokenReview", verbs: []string{"create"}},
	{gv: "authorization.k8s.io/v1", resource: "localsubjectaccessreviews", kind: "LocalSubjectAccessReview", namespaced: true, verbs: []string{"create"}},
	{gv: "authorization.k8s.io/v1", resource: "selfsubjectaccessreviews", kind: "SelfSubjectAccessReview", verbs: []string{"create"}},
	{gv: "authorization.k8s.io/v1", resource: "selfsubjectrulesreviews", kind: "SelfSubjectRulesReview", verbs: []string{"create"}},
	{gv: "authorization.k8s.io/v1", resource: "subjectaccessreviews", kind: "SubjectAccessReview", verbs: []string{"create"}},
	{gv: "rbac.authorization.k8s.io/v1", resource: "clusterrolebindings", kind: "ClusterRoleBinding"},
	{gv: "rbac.authorization.k8s.io/v1", resource: "clusterroles", kind: "ClusterRole"},
	{gv: "rbac.authorization.k8s.io/v1", resource: "rolebindings", kind: "RoleBinding", namespaced: true},
	{gv: "rbac.authorization.k8s.io/v1", resource: "roles", kind: "Role", namespaced: true},
	{gv: "scheduling.k8s.io/v1", resource: "priorityclasses", kind: "PriorityClass", short: []string{"pc"}},
	{gv: "storage.k8s.io/v1", resource: "storageclasses", kind: "StorageClass", short: []string{"sc"}},
}

// groupOrder is the order of groups in discovery (core first).
var groupOrder = []string{
	"", "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io",
	"autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io", "policy", "rbac.authorization.k8s.io",
	"storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
	"coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "flowcontrol.apiserver.k8s.io",
}

func (r res) build() *Resource {
	gv, err := schema.ParseGroupVersion(r.gv)
	if err != nil {
		panic(err)
	}
	out := &Resource{
		GroupVersionResource: gv.WithResource(r.resource),
		Kind:                 r.kind,
		ListKind:             r.kind + "List",
		Singular:             lower(r.kind),
		ShortNames:           r.short,
		Categories:           r.categories,
		Namespaced:           r.namespaced,
		Verbs:                r.verbs,
		StatusSubresource:    r.status,
		TracksGeneration:     r.generation,
		StorageVersion:       gv.Version,
	}
	if r.storage != "" {
		out.StorageVersion = r.storage
	}
	if out.Verbs == nil {
		out.Verbs = StandardVerbs
	}
	if r.status {
		out.Subresources = append(out.Subresources, Subresource{Name: "status", Kind: out.GroupVersionKind(), Verbs: subVerbs})
	}
	out.Subresources = append(out.Subresources, r.extraSubs...)
	sortSubresources(out.Subresources)
	return out
}
