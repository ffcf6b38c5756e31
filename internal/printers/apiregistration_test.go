package printers

import (
	"testing"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// TestAPIServiceTable: the rows kube-apiserver 1.37.2 printed for a Local
// APIService and for a remote one whose Service is missing.
func TestAPIServiceTable(t *testing.T) {
	local := &apiregistrationv1.APIService{ObjectMeta: objMeta("v1.apps"), Status: apiregistrationv1.APIServiceStatus{
		Conditions: []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue, Reason: "Local"}}}}
	missing := &apiregistrationv1.APIService{ObjectMeta: objMeta("v1alpha1.wardle.example.com"),
		Spec: apiregistrationv1.APIServiceSpec{Service: &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api"}},
		Status: apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{
			{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionFalse, Reason: "ServiceNotFound"}}}}
	unchecked := &apiregistrationv1.APIService{ObjectMeta: objMeta("v1.x"),
		Spec: apiregistrationv1.APIServiceSpec{Service: &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "svc"}}}
	noReason := missing.DeepCopy()
	noReason.Status.Conditions[0].Reason = ""
	checkKind(t, lookup(t, "apiregistration.k8s.io", "v1", "apiservices"), []string{"Name", "Service", "Available", "Age"}, []cellCase{
		{name: "local", obj: local, cells: []any{"v1.apps", "Local", "True", "5m"}},
		{name: "service not found", obj: missing, cells: []any{"v1alpha1.wardle.example.com", "wardle/api", "False (ServiceNotFound)", "5m"}},
		{name: "no condition", obj: unchecked, cells: []any{"v1.x", "ns/svc", "Unknown", "5m"}},
		{name: "no reason", obj: noReason, cells: []any{"v1alpha1.wardle.example.com", "wardle/api", "False", "5m"}},
	})
}
