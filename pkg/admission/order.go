package admission

// pluginOrder is kube-apiserver 1.37's execution order of every admission
// plugin (AllOrderedPlugins). Every Registry starts from it: upstream plugins
// always run in this order, whatever the order of the flags.
var pluginOrder = []string{
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
	"NodeDeclaredFeatureValidator",
	"PodResizeValidator",
	"MutatingAdmissionPolicy",
	"MutatingAdmissionWebhook",
	"ValidatingAdmissionPolicy",
	"ValidatingAdmissionWebhook",
	"ResourceQuota",
	"AlwaysDeny",
}

// defaultOffPlugins are off unless enabled explicitly.
var defaultOffPlugins = []string{
	"AlwaysAdmit", "NamespaceAutoProvision", "NamespaceExists", "LimitPodHardAntiAffinityTopology",
	"NodeRestriction", "AlwaysPullImages", "ImagePolicyWebhook", "PodNodeSelector", "PodTolerationRestriction",
	"EventRateLimit", "ExtendedResourceToleration", "OwnerReferencesPermissionEnforcement",
	"DenyServiceExternalIPs", "AlwaysDeny",
}
