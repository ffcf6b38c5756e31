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
	"NamespaceLifecycle",
	"NodeRestriction",
	"DefaultStorageClass",
	"StorageObjectInUseProtection",
	"PersistentVolumeClaimResize",
	"DefaultIngressClass",
	"DenyServiceExternalIPs",
	"MutatingAdmissionPolicy",
	"MutatingAdmissionWebhook",
	"ValidatingAdmissionPolicy",
	"ValidatingAdmissionWebhook",
}

var offByDefault = []string{"NodeRestriction", "DenyServiceExternalIPs"}

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
