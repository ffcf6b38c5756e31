package registry

import (
	"reflect"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestNetworkingIPResources(t *testing.T) {
	var names []string
	for _, r := range testCatalogue.Resources() {
		if r.Group == "networking.k8s.io" {
			names = append(names, r.Resource)
		}
	}
	// kube-apiserver 1.37.2's discovery of networking.k8s.io/v1
	if want := []string{"ingressclasses", "ingresses", "ipaddresses", "networkpolicies", "servicecidrs"}; !reflect.DeepEqual(names, want) {
		t.Errorf("networking.k8s.io resources = %q, want %q", names, want)
	}
	ip, _ := testCatalogue.Lookup(schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ipaddresses"})
	cidr, _ := testCatalogue.Lookup(schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "servicecidrs"})
	if ip == nil || ip.Namespaced || ip.StatusSubresource || !reflect.DeepEqual(ip.ShortNames, []string{"ip"}) {
		t.Errorf("ipaddresses = %+v, want cluster-scoped, no status, short name ip", ip)
	}
	if cidr == nil || cidr.Namespaced || !cidr.StatusSubresource || cidr.ShortNames != nil {
		t.Errorf("servicecidrs = %+v, want cluster-scoped with status, no short name", cidr)
	}
}

func ipAddress(name string, ref *networkingv1.ParentReference) *networkingv1.IPAddress {
	return &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: networkingv1.IPAddressSpec{ParentRef: ref}}
}

// The errors of IPAddress writes as kube-apiserver 1.37.2 printed them
// (kubectl create -f / patch): the name is an IP address in canonical
// form; the required errors of the beta declarative rules come last, and
// a parentRef change is immutable without a value.
func TestValidateIPAddress(t *testing.T) {
	svc := &networkingv1.ParentReference{Resource: "services", Name: "foo"}
	for _, tc := range []struct {
		name string
		ip   *networkingv1.IPAddress
		want string
	}{
		{"valid", ipAddress("10.0.0.5", svc), ""},
		{"leading zeros", ipAddress("127.1.0.050", svc), `metadata.name: Invalid value: "127.1.0.050": must not have leading 0s`},
		{"not canonical", ipAddress("fd00:0::1", svc), `metadata.name: Invalid value: "fd00:0::1": must be in canonical form ("fd00::1")`},
		{"mapped", ipAddress("::ffff:1.2.3.4", svc), `metadata.name: Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address`},
		{"not an address", ipAddress("notanip", svc), `metadata.name: Invalid value: "notanip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`},
		{"no parent", ipAddress("10.0.0.1", nil), "spec.parentRef: Required value"},
		{"empty parent", ipAddress("10.0.0.2", &networkingv1.ParentReference{}), "[spec.parentRef.resource: Required value, spec.parentRef.name: Required value]"},
		{"bad parent", ipAddress("10.0.0.3", &networkingv1.ParentReference{Group: "Bad_Group", Resource: "a/b", Name: "c/d", Namespace: ".."}),
			`[spec.parentRef.group: Invalid value: "Bad_Group": ` + dnsSubdomainMsg + `, spec.parentRef.resource: Invalid value: "a/b": may not contain '/', ` +
				`spec.parentRef.name: Invalid value: "c/d": may not contain '/', spec.parentRef.namespace: Invalid value: "..": may not be '..']`},
		{"bad and missing", ipAddress("10.0.0.4", &networkingv1.ParentReference{Group: "Bad_Group", Namespace: "x%y"}),
			`[spec.parentRef.group: Invalid value: "Bad_Group": ` + dnsSubdomainMsg + `, spec.parentRef.namespace: Invalid value: "x%y": may not contain '%', ` +
				`spec.parentRef.resource: Required value, spec.parentRef.name: Required value]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.ip)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestIPAddressUpdates(t *testing.T) {
	old := ipAddress("10.0.0.5", &networkingv1.ParentReference{Resource: "services", Name: "foo"})
	for _, tc := range []struct {
		name string
		ref  *networkingv1.ParentReference
		want string
	}{
		{"unchanged", &networkingv1.ParentReference{Resource: "services", Name: "foo"}, ""},
		{"other name", &networkingv1.ParentReference{Resource: "services", Name: "bar"}, "spec.parentRef: Invalid value: null: field is immutable"},
		{"removed", nil, "[spec.parentRef: Required value, spec.parentRef: Invalid value: null: field is immutable]"},
		{"resource emptied", &networkingv1.ParentReference{Name: "foo"}, "[spec.parentRef.resource: Required value, spec.parentRef: Invalid value: null: field is immutable]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := old.DeepCopy()
			next.Spec.ParentRef = tc.ref
			if got := aggregate(updateErrors(t, next, old)); got != tc.want {
				t.Errorf("update errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func serviceCIDR(name string, cidrs ...string) *networkingv1.ServiceCIDR {
	return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
}

// The errors of ServiceCIDR writes as kube-apiserver 1.37.2 printed them.
func TestValidateServiceCIDR(t *testing.T) {
	for _, tc := range []struct {
		name string
		cidr *networkingv1.ServiceCIDR
		want string
	}{
		{"valid", serviceCIDR("extra", "10.96.0.0/28"), ""},
		{"dual", serviceCIDR("dual", "10.96.0.0/28", "fd00::/112"), ""},
		{"none", serviceCIDR("none"), "spec.cidrs: Required value: at least one CIDR required"},
		{"three", serviceCIDR("three", "10.1.0.0/24", "fd00::/64", "10.2.0.0/24"),
			`spec.cidrs: Invalid value: {"CIDRs":["10.1.0.0/24","fd00::/64","10.2.0.0/24"]}: may only hold up to 2 values`},
		{"one family", serviceCIDR("two4", "10.1.0.0/24", "10.2.0.0/24"),
			`spec.cidrs: Invalid value: ["10.1.0.0/24","10.2.0.0/24"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64`},
		{"not canonical", serviceCIDR("bad", "10.1.0.1/24", "fd00:0::/64"),
			`[spec.cidrs[0]: Invalid value: "10.1.0.1/24": must not have bits set beyond the prefix length, spec.cidrs[1]: Invalid value: "fd00:0::/64": must be in canonical form ("fd00::/64")]`},
		{"not CIDRs", serviceCIDR("bad2", "nope", "10.1.0.0/33"),
			`[spec.cidrs[0]: Invalid value: "nope": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64), spec.cidrs[1]: Invalid value: "10.1.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)]`},
		{"mapped", serviceCIDR("bad3", "::ffff:10.1.0.0/120"), `spec.cidrs[0]: Invalid value: "::ffff:10.1.0.0/120": must not have an IPv4-mapped IPv6 address`},
		{"name", serviceCIDR("Bad_Name", "10.1.0.0/24"), `metadata.name: Invalid value: "Bad_Name": ` + dnsSubdomainMsg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.cidr)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestServiceCIDRWrites(t *testing.T) {
	old := serviceCIDR("st", "10.5.0.0/24")
	old.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "X", Message: "m"}}
	r := resourceFor(t, old)
	if errs := createErrors(t, old); len(errs) > 0 || len(old.Status.Conditions) > 0 {
		t.Fatalf("create: %v, status %+v; want allowed, an empty status", errs, old.Status)
	}
	for _, tc := range []struct {
		name  string
		cidrs []string
		want  string
	}{
		{"changed", []string{"10.97.0.0/28"}, `spec.cidrs[0]: Invalid value: "10.97.0.0/28": field is immutable`},
		{"to dual stack", []string{"10.5.0.0/24", "fd00::/112"}, ""},
		{"same family added", []string{"10.5.0.0/24", "10.6.0.0/24"},
			`spec.cidrs: Invalid value: ["10.5.0.0/24","10.6.0.0/24"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64`},
		{"first changed, second added", []string{"10.7.0.0/24", "fd00:1::/112"}, `spec.cidrs[0]: Invalid value: "10.7.0.0/24": field is immutable`},
		{"emptied", []string{}, "spec.cidrs: Invalid value: []: field is immutable"},
		{"three", []string{"10.5.0.0/24", "fd00:1::/112", "10.9.0.0/24"}, `spec.cidrs: Invalid value: ["10.5.0.0/24","fd00:1::/112","10.9.0.0/24"]: field is immutable`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := old.DeepCopy()
			next.Spec.CIDRs = tc.cidrs
			if got := aggregate(updateErrors(t, next, old)); got != tc.want {
				t.Errorf("update errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	status := old.DeepCopy()
	status.Spec.CIDRs, status.Labels = []string{"10.8.0.0/24"}, map[string]string{"a": "b"}
	status.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Message: "ready"}}
	out := PrepareForUpdate(r, "status", status, old).(*networkingv1.ServiceCIDR)
	if errs := r.ValidateSubresourceChange("status", out, old); len(errs) > 0 || out.Spec.CIDRs[0] != "10.5.0.0/24" || out.Labels != nil || len(out.Status.Conditions) != 1 {
		t.Errorf("status write: %v, kept %+v; want allowed with the stored spec and labels and the new status", errs, out)
	}
	main := old.DeepCopy()
	main.Status.Conditions = status.Status.Conditions
	if out := PrepareForUpdate(r, "", main, old).(*networkingv1.ServiceCIDR); len(out.Status.Conditions) != 0 {
		t.Errorf("write of the main resource kept status %+v, want the stored (empty) one", out.Status)
	}
}
