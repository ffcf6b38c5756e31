package printers

import "k8s.io/apimachinery/pkg/runtime/schema"

// builtinPrinters are the built-in kinds upstream has a printer for, by group
// and resource. Kinds not listed (Roles, ClusterRoles, LimitRanges,
// …) get upstream's default Name / Created At.
var builtinPrinters = map[schema.GroupResource]printer{
	{Resource: "pods"}:                   podPrinter,
	{Resource: "namespaces"}:             namespacePrinter,
	{Resource: "configmaps"}:             configMapPrinter,
	{Resource: "secrets"}:                secretPrinter,
	{Resource: "services"}:               servicePrinter,
	{Resource: "serviceaccounts"}:        serviceAccountPrinter,
	{Resource: "endpoints"}:              endpointsPrinter,
	{Resource: "events"}:                 eventPrinter,
	{Resource: "nodes"}:                  nodePrinter,
	{Resource: "persistentvolumes"}:      persistentVolumePrinter,
	{Resource: "persistentvolumeclaims"}: persistentVolumeClaimPrinter,
	{Resource: "replicationcontrollers"}: replicationControllerPrinter,
	{Resource: "resourcequotas"}:         resourceQuotaPrinter,
	{Resource: "podtemplates"}:           podTemplatePrinter,
	{Resource: "componentstatuses"}:      componentStatusPrinter,

	{Group: "apiregistration.k8s.io", Resource: "apiservices"}:             apiServicePrinter,
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: crdPrinter,

	{Group: "apps", Resource: "deployments"}:         deploymentPrinter,
	{Group: "apps", Resource: "replicasets"}:         replicaSetPrinter,
	{Group: "apps", Resource: "statefulsets"}:        statefulSetPrinter,
	{Group: "apps", Resource: "daemonsets"}:          daemonSetPrinter,
	{Group: "apps", Resource: "controllerrevisions"}: controllerRevisionPrinter,
	{Group: "batch", Resource: "jobs"}:               jobPrinter,
	{Group: "batch", Resource: "cronjobs"}:           cronJobPrinter,

	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: hpaPrinter,

	{Group: "networking.k8s.io", Resource: "ingresses"}:                    ingressPrinter,
	{Group: "networking.k8s.io", Resource: "ingressclasses"}:               ingressClassPrinter,
	{Group: "networking.k8s.io", Resource: "networkpolicies"}:              networkPolicyPrinter,
	{Group: "networking.k8s.io", Resource: "servicecidrs"}:                 serviceCIDRPrinter,
	{Group: "networking.k8s.io", Resource: "ipaddresses"}:                  ipAddressPrinter,
	{Group: "storage.k8s.io", Resource: "storageclasses"}:                  storageClassPrinter,
	{Group: "certificates.k8s.io", Resource: "clustertrustbundles"}:        clusterTrustBundlePrinter,
	{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}:     podCertificateRequestPrinter,
	{Group: "storage.k8s.io", Resource: "csidrivers"}:                      csiDriverPrinter,
	{Group: "storage.k8s.io", Resource: "csinodes"}:                        csiNodePrinter,
	{Group: "storage.k8s.io", Resource: "csistoragecapacities"}:            csiStorageCapacityPrinter,
	{Group: "storage.k8s.io", Resource: "volumeattachments"}:               volumeAttachmentPrinter,
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}:         volumeAttributesClassPrinter,
	{Group: "resource.k8s.io", Resource: "deviceclasses"}:                  deviceClassPrinter,
	{Group: "resource.k8s.io", Resource: "devicetaintrules"}:               deviceTaintRulePrinter,
	{Group: "resource.k8s.io", Resource: "resourceclaims"}:                 resourceClaimPrinter,
	{Group: "resource.k8s.io", Resource: "resourceclaimtemplates"}:         resourceClaimTemplatePrinter,
	{Group: "resource.k8s.io", Resource: "resourceslices"}:                 resourceSlicePrinter,
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}:              priorityClassPrinter,
	{Group: "node.k8s.io", Resource: "runtimeclasses"}:                     runtimeClassPrinter,
	{Group: "coordination.k8s.io", Resource: "leases"}:                     leasePrinter,
	{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}:         roleBindingPrinter,
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}:  clusterRoleBindingPrinter,
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: csrPrinter,
	{Group: "policy", Resource: "poddisruptionbudgets"}:                    podDisruptionBudgetPrinter,
	{Group: "discovery.k8s.io", Resource: "endpointslices"}:                endpointSlicePrinter,
	{Group: "events.k8s.io", Resource: "events"}:                           eventsV1Printer,

	{Group: "storagemigration.k8s.io", Resource: "storageversionmigrations"}: storageVersionMigrationPrinter,

	{Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"}:                 flowSchemaPrinter,
	{Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"}: priorityLevelPrinter,

	{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}:     mutatingWebhookPrinter,
	{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}:   validatingWebhookPrinter,
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}:       validatingPolicyPrinter,
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}: validatingPolicyBindingPrinter,
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}:         mutatingPolicyPrinter,
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicybindings"}:   mutatingPolicyBindingPrinter,
}
