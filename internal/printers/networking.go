package printers

import (
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The ServiceCIDR and IPAddress tables, as upstream's printServiceCIDR and
// printIPAddress. An IPAddress row carries an Age cell its columns do not
// define, as upstream's does (kubectl shows two columns).
var serviceCIDRPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("CIDRs", networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]),
	ageColumn,
}, func(c *networkingv1.ServiceCIDR, now time.Time) []any {
	return []any{c.Name, strings.Join(c.Spec.CIDRs, ","), since(c.CreationTimestamp, now)}
})

var ipAddressPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("ParentRef", networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]),
}, func(ip *networkingv1.IPAddress, now time.Time) []any {
	return []any{ip.Name, parentRefName(ip.Spec.ParentRef), since(ip.CreationTimestamp, now)}
})

// parentRefName is "<resource>[.<group>]/[<namespace>/]<name>", or
// "<none>".
func parentRefName(ref *networkingv1.ParentReference) string {
	if ref == nil {
		return "<none>"
	}
	name := strings.ToLower(schema.GroupResource{Group: ref.Group, Resource: ref.Resource}.String())
	if ref.Namespace != "" {
		name += "/" + ref.Namespace
	}
	return name + "/" + ref.Name
}
