package admission

// PluginOrder is kube-apiserver 1.37's execution order of every admission
// plugin (AllOrderedPlugins). A chain always runs in this order, whatever the
// order of the flags.
var PluginOrder = []string{
	"AlwaysAdmit",
	"NamespaceAutoProvision",
	"NamespaceLifecycle",
	"NamespaceExists",
	"LimitPodHardAntiAffinityTopology",
	"LimitRanger",
	"ServiceAccount",
	"NodeRestriction",
	"TaintNodesByCondition",
	"AlwaysPullImages",
	"ImagePolicyWebhook",
	"PodSecurity",
	"PodNodeSelector",
	"Priority",
	"DefaultTolerationSeconds",
	"PodTolerationRestriction",
	"EventRateLimit",
	"ExtendedResourceToleration",
	"DefaultStorageClass",
	"StorageObjectInUseProtection",
	"PodGroupProtection",
	"OwnerReferencesPermissionEnforcement",
	"PersistentVolumeClaimResize",
	"RuntimeClass",
	"CertificateApproval",
	"CertificateSigning",
	"ClusterTrustBundleAttest",
	"CertificateSubjectRestriction",
	"DefaultIngressClass",
	"DenyServiceExternalIPs",
	"PodTopologyLabels",
	"PodGroupWorkloadExists",
	"NodeDeclaredFeatureValidator",
	"JobValidation",
	"PodResizeValidator",
	"MutatingAdmissionPolicy",
	"MutatingAdmissionWebhook",
	"ValidatingAdmissionPolicy",
	"ValidatingAdmissionWebhook",
	"ResourceQuota",
	"AlwaysDeny",
}

// DefaultOffPlugins are off unless enabled explicitly.
var DefaultOffPlugins = []string{
	"AlwaysAdmit", "NamespaceAutoProvision", "NamespaceExists", "LimitPodHardAntiAffinityTopology",
	"NodeRestriction", "AlwaysPullImages", "ImagePolicyWebhook", "PodNodeSelector", "PodTolerationRestriction",
	"EventRateLimit", "ExtendedResourceToleration", "OwnerReferencesPermissionEnforcement",
	"DenyServiceExternalIPs", "AlwaysDeny",
}
