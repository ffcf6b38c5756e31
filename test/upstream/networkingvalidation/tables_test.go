package networkingvalidation

import (
	"fmt"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// The inputs of upstream's own validation tests
// (pkg/apis/networking/validation/validation_test.go:
// TestValidateIPAddress, TestValidateIPAddressUpdate,
// TestValidateServiceCIDR, TestValidateServiceCIDRUpdate) as v1 objects,
// with the cases recorded from kube-apiserver 1.37.2 for admitd's own tests.

func ref(group, resource, namespace, name string) *networkingv1.ParentReference {
	return &networkingv1.ParentReference{Group: group, Resource: resource, Namespace: namespace, Name: name}
}

func ipAddress(name string, parent *networkingv1.ParentReference) *networkingv1.IPAddress {
	return &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: networkingv1.IPAddressSpec{ParentRef: parent}}
}

func upstreamIPAddresses() map[string]*networkingv1.IPAddress {
	svc := ref("", "services", "bar", "foo")
	return map[string]*networkingv1.IPAddress{
		"bad name":                        ipAddress("test-name", svc),
		"bad name, no parent":             ipAddress("test-name", nil),
		"good":                            ipAddress("192.168.1.1", svc),
		"gateway":                         ipAddress("192.168.1.1", ref("gateway.networking.k8s.io", "gateway", "bar", "foo")),
		"ipv6":                            ipAddress("2001:4860:4860::8888", svc),
		"non-canonical ipv6":              ipAddress("2001:4860:4860:0::8888", svc),
		"no parent":                       ipAddress("192.168.1.1", nil),
		"wrong parent":                    ipAddress("192.168.1.1", ref("custom.resource.com", "services", "", "foo$%&")),
		"wrong parent, many errors":       ipAddress("192.168.1.1", ref(".cust@m.resource.com", "", "bar$$$$$%@", "")),
		"leading zeros":                   ipAddress("127.1.0.050", svc),
		"mapped":                          ipAddress("::ffff:1.2.3.4", svc),
		"empty parent":                    ipAddress("10.0.0.2", ref("", "", "", "")),
		"bad parent fields":               ipAddress("10.0.0.3", ref("Bad_Group", "a/b", "..", "c/d")),
		"bad group, missing fields":       ipAddress("10.0.0.4", ref("Bad_Group", "", "x%y", "")),
		"generate name":                   {ObjectMeta: metav1.ObjectMeta{GenerateName: "10.0.0.6"}, Spec: networkingv1.IPAddressSpec{ParentRef: svc}},
		"namespace on a cluster kind":     {ObjectMeta: metav1.ObjectMeta{Name: "10.0.0.7", Namespace: "default"}, Spec: networkingv1.IPAddressSpec{ParentRef: svc}},
		"bad labels and a missing parent": {ObjectMeta: metav1.ObjectMeta{Name: "10.0.0.8", Labels: map[string]string{"bad key!": "v"}}},
	}
}

func serviceCIDR(name string, cidrs ...string) *networkingv1.ServiceCIDR {
	return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
}

func upstreamServiceCIDRs() map[string]*networkingv1.ServiceCIDR {
	return map[string]*networkingv1.ServiceCIDR{
		"empty":                    serviceCIDR("test-name"),
		"three":                    serviceCIDR("test-name", "192.168.0.0/24", "fd00::/64", "10.0.0.0/16"),
		"ipv4":                     serviceCIDR("test-name", "192.168.0.0/24"),
		"ipv6":                     serviceCIDR("test-name", "fd00:1234::/64"),
		"dual":                     serviceCIDR("test-name", "192.168.0.0/24", "fd00:1234::/64"),
		"not a cidr":               serviceCIDR("test-name", "asdasdasd"),
		"an ip":                    serviceCIDR("test-name", "192.168.0.1"),
		"host bits":                serviceCIDR("test-name", "192.168.0.1/24"),
		"ipv6 host bits":           serviceCIDR("test-name", "fd00:1234::2/64"),
		"ipv6 capitals":            serviceCIDR("test-name", "FD00:1234::0/64"),
		"good ipv4, bad ipv6":      serviceCIDR("test-name", "192.168.0.0/24", "FD00:1234::/64"),
		"bad ipv4, good ipv6":      serviceCIDR("test-name", "192.168.007.0/24", "fd00:1234::/64"),
		"both bad":                 serviceCIDR("test-name", "192.168.007.0/24", "MN00:1234::/64"),
		"one family":               serviceCIDR("test-name", "10.1.0.0/24", "10.2.0.0/24"),
		"mapped":                   serviceCIDR("test-name", "::ffff:10.1.0.0/120"),
		"bad name":                 serviceCIDR("Bad_Name", "10.1.0.0/24"),
		"status on create":         {ObjectMeta: metav1.ObjectMeta{Name: "st"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.5.0.0/24"}}, Status: readyStatus("False")},
		"namespace, bad finalizer": {ObjectMeta: metav1.ObjectMeta{Name: "ns", Namespace: "default", Finalizers: []string{"cleanup"}}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.5.0.0/24"}}},
	}
}

func readyStatus(status metav1.ConditionStatus) networkingv1.ServiceCIDRStatus {
	return networkingv1.ServiceCIDRStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: status, Reason: "X", Message: "m",
		LastTransitionTime: metav1.Date(2020, 1, 1, 0, 0, 0, 0, metav1.Now().Location())}}}
}

// upstreamCIDRChanges are the spec changes of TestValidateServiceCIDRUpdate
// and admitd's recorded ones, over old.
func upstreamCIDRChanges() map[string][2][]string {
	v4, v6, dual := []string{"192.168.0.0/24"}, []string{"fd00:1234::/64"}, []string{"192.168.0.0/24", "fd00:1234::/64"}
	return map[string][2][]string{
		"no change (dual)":           {dual, dual},
		"no change (v4)":             {v4, v4},
		"v4 to dual":                 {v4, dual},
		"v6 to dual":                 {v6, {"fd00:1234::/64", "192.168.0.0/24"}},
		"change both (dual)":         {dual, {"10.0.0.0/16", "fd00:abcd::/64"}},
		"change (single)":            {v4, {"10.0.0.0/16"}},
		"to dual with primary moved": {v4, {"10.0.0.0/16", "fd00:1234::/64"}},
		"v6 to dual, primary moved":  {v6, {"fd00:abcd::/64", "192.168.0.0/24"}},
		"dual to single":             {dual, v4},
		"dual reordered":             {dual, {"fd00:1234::/64", "192.168.0.0/24"}},
		"add the same family":        {v4, {"192.168.0.0/24", "10.6.0.0/24"}},
		"emptied":                    {v4, {}},
		"three":                      {v4, {"192.168.0.0/24", "fd00:1::/112", "10.9.0.0/24"}},
		"add a bad one":              {v4, {"192.168.0.0/24", "fd00:0::/64"}},
	}
}

func TestUpstreamTables(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	both := func(name string, obj runtime.Object) {
		for _, defaulted := range []bool{false, true} {
			compare(t, cat, write{Name: fmt.Sprintf("%s (defaulted %v)", name, defaulted), Obj: obj, Defaulted: defaulted}, &c)
		}
	}
	for name, ip := range upstreamIPAddresses() {
		both("ipaddress "+name, ip)
	}
	old := ipAddress("192.168.1.1", ref("custom.resource.com", "services", "bar", "foo"))
	for name, parent := range map[string]*networkingv1.ParentReference{
		"no change": ref("custom.resource.com", "services", "bar", "foo"), "other resource": ref("custom.resource.com", "Gateway", "bar", "foo"),
		"removed": nil, "resource emptied": ref("custom.resource.com", "", "bar", "foo"), "other name": ref("custom.resource.com", "services", "bar", "baz"),
	} {
		next := old.DeepCopy()
		next.Spec.ParentRef = parent
		compare(t, cat, write{Name: "ipaddress update: " + name, Obj: next, Old: old, Defaulted: true}, &c)
		labelled := old.DeepCopy()
		labelled.Labels = map[string]string{"bad key!": "v"}
		labelled.Spec.ParentRef = parent
		compare(t, cat, write{Name: "ipaddress update with bad labels: " + name, Obj: labelled, Old: old, Defaulted: true}, &c)
	}
	for name, sc := range upstreamServiceCIDRs() {
		both("servicecidr "+name, sc)
	}
	for name, change := range upstreamCIDRChanges() {
		old := serviceCIDR("mysvc", change[0]...)
		next := serviceCIDR("mysvc", change[1]...)
		compare(t, cat, write{Name: "servicecidr update: " + name, Obj: next, Old: old, Defaulted: true}, &c)
		for _, status := range []bool{false, true} {
			withStatus := next.DeepCopy()
			withStatus.Status = readyStatus("True")
			withStatus.Labels = map[string]string{"a": "b"}
			compare(t, cat, write{Name: fmt.Sprintf("servicecidr update with status (status %v): %s", status, name), Obj: withStatus, Old: old, Status: status, Defaulted: true}, &c)
		}
	}
	t.Log(c.String())
}
