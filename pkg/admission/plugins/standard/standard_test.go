package standard_test

import (
	"reflect"
	"testing"

	"github.com/admitd/admitd/pkg/admission/plugins/standard"
)

// every plugin admitd has, in kube-apiserver's order; a plugin added to
// standard is added here.
var all = []string{
	"NamespaceLifecycle",
	"MutatingAdmissionPolicy",
	"MutatingAdmissionWebhook",
	"ValidatingAdmissionPolicy",
	"ValidatingAdmissionWebhook",
}

func TestRegisterListsEveryPlugin(t *testing.T) {
	r := standard.NewRegistry(standard.Options{})
	got, err := r.Enabled(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, all) {
		t.Fatalf("Enabled(nil, nil) = %v, want %v", got, all)
	}
}
