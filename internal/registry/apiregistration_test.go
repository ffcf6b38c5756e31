package registry

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"
)

func apiService(name string, spec apiregistrationv1.APIServiceSpec) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: spec}
}

func TestAPIServiceResource(t *testing.T) {
	r, ok := testCatalogue.Lookup(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	if !ok || r.Namespaced || !r.StatusSubresource || !r.ClearStatusOnCreate || !reflect.DeepEqual(r.Categories, []string{"api-extensions"}) || r.ShortNames != nil {
		t.Fatalf("apiservices = %+v, want cluster-scoped, status subresource cleared on create, category api-extensions, no short names", r)
	}
	if got := testCatalogue.Groups()[1]; got != "apiregistration.k8s.io" {
		t.Errorf("second group in discovery = %q, want apiregistration.k8s.io", got)
	}
}

func TestValidateAPIService(t *testing.T) {
	remote := apiregistrationv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1alpha1", GroupPriorityMinimum: 1000, VersionPriority: 15,
		Service: &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api"}, InsecureSkipTLSVerify: true}
	for _, tc := range []struct {
		name string
		svc  *apiregistrationv1.APIService
		want string
	}{
		{"remote", apiService("v1alpha1.wardle.example.com", remote), ""},
		{"local core", apiService("v1.", apiregistrationv1.APIServiceSpec{Version: "v1", GroupPriorityMinimum: 18000, VersionPriority: 1}), ""},
		// Both recorded from kube-apiserver 1.37.2 (kubectl apply).
		{"local with TLS settings", apiService("v1.wrong", apiregistrationv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1",
			VersionPriority: 1001, CABundle: []byte("abc"), InsecureSkipTLSVerify: true}),
			"[metadata.name: Invalid value: \"v1.wrong\": must be `spec.version+\".\"+spec.group`: \"v1.wardle.example.com\", " +
				`spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000, ` +
				`spec.versionPriority: Invalid value: 1001: must be positive and less than 1000, ` +
				`spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle, ` +
				`spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify]`},
		{"bad service", apiService("V1.x", apiregistrationv1.APIServiceSpec{Version: "V1", GroupPriorityMinimum: 100, VersionPriority: 10,
			Service: &apiregistrationv1.ServiceReference{Port: ptr.To[int32](70000)}, CABundle: []byte("abc"), InsecureSkipTLSVerify: true}),
			"[metadata.name: Invalid value: \"V1.x\": must be `spec.version+\".\"+spec.group`: \"V1.\", " +
				`spec.group: Required value: only v1 may have an empty group and it better be legacy kube, ` +
				`spec.version: Invalid value: "V1": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'), ` +
				`spec.service.namespace: Required value, spec.service.name: Required value, ` +
				`spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive, ` +
				`spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present]`},
		{"name not a path segment", apiService("v1.a%b", apiregistrationv1.APIServiceSpec{Group: "a%b", Version: "v1", GroupPriorityMinimum: 1, VersionPriority: 1}),
			`[metadata.name: Invalid value: "v1.a%b": may not contain '%', spec.group: Invalid value: "a%b": ` + dnsSubdomainMsg + `]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.svc)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestAPIServiceWrites(t *testing.T) {
	local := apiService("v1.apps", apiregistrationv1.APIServiceSpec{Group: "apps", Version: "v1", GroupPriorityMinimum: 17800, VersionPriority: 15})
	local.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: "Sent", Status: "True"}}
	if errs := createErrors(t, local); len(errs) > 0 {
		t.Fatalf("create: %v", errs)
	}
	if c := local.Status.Conditions; len(c) != 1 || c[0].Type != apiregistrationv1.Available || c[0].Status != apiregistrationv1.ConditionTrue ||
		c[0].Reason != "Local" || c[0].Message != "Local APIServices are always available" || c[0].LastTransitionTime.IsZero() {
		t.Errorf("local status after create = %+v, want only Available True (Local)", c)
	}
	remote := apiService("v1.wardle.example.com", apiregistrationv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1", GroupPriorityMinimum: 1000,
		VersionPriority: 15, Service: &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api"}})
	remote.Status.Conditions = local.Status.Conditions
	if errs := createErrors(t, remote); len(errs) > 0 || remote.Status.Conditions != nil || *remote.Spec.Service.Port != 443 {
		t.Fatalf("create: %v, status %+v, port %v; want allowed, no conditions, port 443", errs, remote.Status, remote.Spec.Service.Port)
	}
	r := resourceFor(t, remote)
	write := remote.DeepCopy()
	write.Spec.VersionPriority, write.Labels = 20, map[string]string{"a": "b"}
	write.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: "Maybe"}}
	out := PrepareForUpdate(r, "status", write, remote).(*apiregistrationv1.APIService)
	want := `status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"`
	if got := aggregate(r.ValidateSubresourceChange("status", out, remote)); got != want || out.Spec.VersionPriority != 15 || out.Labels != nil {
		t.Errorf("status write: %s, kept %+v; want %s, the stored spec and labels", got, out, want)
	}
}
