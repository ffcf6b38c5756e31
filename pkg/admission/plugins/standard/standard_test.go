package standard_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/admitd/admitd/pkg/admission/plugins/standard"
)

// every plugin admitd has, in kube-apiserver's order; a plugin added to
// standard is added here, and to offByDefault when upstream has it off.
var all = []string{
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

var offByDefault = []string{"NodeRestriction", "EventRateLimit", "OwnerReferencesPermissionEnforcement", "PodNodeSelector", "PodTolerationRestriction", "ExtendedResourceToleration", "AlwaysAdmit", "NamespaceAutoProvision", "NamespaceExists", "LimitPodHardAntiAffinityTopology",
	"AlwaysPullImages", "ImagePolicyWebhook", "AlwaysDeny", "DenyServiceExternalIPs"}

func TestRegisterListsEveryPlugin(t *testing.T) {
	r := standard.NewRegistry(standard.Options{})
	got, err := r.Enabled(offByDefault, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, all) {
		t.Fatalf("Enabled(%v, nil) = %v, want %v", offByDefault, got, all)
	}
	byDefault, err := r.Enabled(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range offByDefault {
		if slices.Contains(byDefault, n) {
			t.Errorf("Enabled(nil, nil) = %v, want %s off by default", byDefault, n)
		}
	}
}
