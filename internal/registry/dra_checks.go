package registry

import (
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Check is a condition a write needs of the cluster rather than of the
// object: a label on a namespace, or a permission of the requesting user.
// A kind's strategy says which checks a write needs (Strategy.Checks); the
// server, which can read namespaces and ask the authorizer, runs them
// after preparation, and a refusal is a validation error placed before
// the kind's own, where upstream's strategies report it. Exactly one of
// Label and Access is set.
type Check struct {
	// Field is where a refusal is reported.
	Field *field.Path
	// Label: Namespace must carry the label Label with value Value, else
	// the write is refused with Refusal.
	Namespace, Label, Value, Refusal string
	// Access: the user must be allowed one of the verbs.
	Access *AccessCheck
}

// AccessCheck is a permission a write needs: one of Verbs(user, verb)
// (verb is the request's) on Resource/Subresource of Group, in Namespace
// ("" cluster-wide), for Name ("" all names).
type AccessCheck struct {
	Group, Resource, Subresource, Namespace, Name string
	Verbs                                         func(user authenticationv1.UserInfo, verb string) []string
	// Refused is the detail of the refusal, given the verbs tried and the
	// authorizer's answer to the first one.
	Refused func(verbs []string, answer string) string
}

// ChecksFor are the checks a write through subresource ("" for the main
// resource) of old (nil on create) into obj needs.
func (r *Resource) ChecksFor(subresource string, obj, old runtime.Object) []Check {
	if sub, ok := r.Strategy.Subresources[subresource]; ok {
		if sub.Checks == nil {
			return nil
		}
		return sub.Checks(obj, old, r.gates())
	}
	if subresource != "" || r.Strategy.Checks == nil {
		return nil
	}
	return r.Strategy.Checks(obj, old)
}

// adminAccessLabel is the namespace label that allows admin access to
// devices (upstream's DRAAdminNamespaceLabelKey).
const adminAccessLabel = "resource.kubernetes.io/admin-access"

var adminAccessRefusal = fmt.Sprintf("admin access to devices requires the `%s: true` label on the containing namespace", adminAccessLabel)

// adminAccessChecks: a claim (or a template's claim, whose spec is at
// spec) whose first request asking for admin access needs the label on
// its namespace.
func adminAccessChecks(namespace string, requests []resourcev1.DeviceRequest, spec *field.Path) []Check {
	for i, r := range requests {
		if r.Exactly != nil && r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
			return []Check{{Field: spec.Child("devices", "requests").Index(i).Child("adminAccess"),
				Namespace: namespace, Label: adminAccessLabel, Value: "true", Refusal: adminAccessRefusal}}
		}
	}
	return nil
}

const gateGranularStatusAuthz = "DRAResourceClaimGranularStatusAuthorization"

// claimStatusChecks: an allocation newly granting admin access needs the
// namespace label; with DRAResourceClaimGranularStatusAuthorization, a
// change of the allocation or the reservations needs the synthetic
// resourceclaims/binding permission, cluster-wide, and (on an allocated
// claim) a change of a driver's device statuses the resourceclaims/driver
// permission for that driver.
func claimStatusChecks(obj, old runtime.Object, gates FeatureGates) []Check {
	c, was := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
	var out []Check
	if _, granted := adminResult(was.Status.Allocation); !granted {
		if i, requested := adminResult(c.Status.Allocation); requested {
			out = append(out, Check{Field: statusFld.Child("allocation", "devices", "results").Index(i).Child("adminAccess"),
				Namespace: c.Namespace, Label: adminAccessLabel, Value: "true", Refusal: adminAccessRefusal})
		}
	}
	if !gates.Enabled(gateGranularStatusAuthz) {
		return out
	}
	if !apiequality.Semantic.DeepEqual(c.Status.Allocation, was.Status.Allocation) ||
		!apiequality.Semantic.DeepEqual(c.Status.ReservedFor, was.Status.ReservedFor) {
		out = append(out, Check{Field: statusFld.Child("allocation"), Access: bindingAccess()})
	}
	if gates.Enabled(gateDeviceStatus) && c.Status.Allocation != nil {
		node := allocatedNode(c.Status.Allocation)
		for _, driver := range changedDrivers(c.Status.Devices, was.Status.Devices) {
			out = append(out, Check{Field: statusFld.Child("devices"), Access: driverAccess(c.Namespace, driver, node)})
		}
	}
	return out
}

// adminResult is the index of the first allocation result granting admin
// access.
func adminResult(a *resourcev1.AllocationResult) (int, bool) {
	if a == nil {
		return 0, false
	}
	for i, r := range a.Devices.Results {
		if r.AdminAccess != nil && *r.AdminAccess {
			return i, true
		}
	}
	return 0, false
}

func bindingAccess() *AccessCheck {
	return &AccessCheck{Group: resourcev1.GroupName, Resource: "resourceclaims", Subresource: resourcev1.SubresourceBinding,
		Verbs: func(_ authenticationv1.UserInfo, verb string) []string { return []string{verb} },
		Refused: func(verbs []string, answer string) string {
			return fmt.Sprintf(`changing status.allocation or status.reservedFor requires resource="resourceclaims/binding", verb="%s" permission: %s`, verbs[0], answer)
		}}
}

// driverAccess: a service account of the node the claim is allocated on
// may hold associated-node:<verb>; anyone may hold arbitrary-node:<verb>.
func driverAccess(namespace, driver, node string) *AccessCheck {
	return &AccessCheck{Group: resourcev1.GroupName, Resource: "resourceclaims", Subresource: resourcev1.SubresourceDriver,
		Namespace: namespace, Name: driver,
		Verbs: func(user authenticationv1.UserInfo, verb string) []string {
			if onNode(user, node) {
				return []string{resourcev1.VerbPrefixAssociatedNode + verb, resourcev1.VerbPrefixArbitraryNode + verb}
			}
			return []string{resourcev1.VerbPrefixArbitraryNode + verb}
		},
		Refused: func(verbs []string, answer string) string {
			return fmt.Sprintf(`changing status.devices requires resource="resourceclaims/driver", verb="%s" permission: %s`, verbs, answer)
		}}
}

// serviceAccountNodeKey is the extra a service account token bound to a
// pod carries with the pod's node.
const serviceAccountNodeKey = "authentication.kubernetes.io/node-name"

// onNode reports whether user is a service account whose token is bound
// to a pod on node.
func onNode(user authenticationv1.UserInfo, node string) bool {
	if node == "" || !isServiceAccountUser(user.Username) {
		return false
	}
	nodes := user.Extra[serviceAccountNodeKey]
	return len(nodes) == 1 && len(apivalidation.NameIsDNSSubdomain(nodes[0], false)) == 0 && nodes[0] == node
}

// isServiceAccountUser: system:serviceaccount:<namespace>:<name> with a
// valid namespace and service account name.
func isServiceAccountUser(name string) bool {
	rest, ok := strings.CutPrefix(name, "system:serviceaccount:")
	parts := strings.Split(rest, ":")
	return ok && len(parts) == 2 && len(apivalidation.ValidateNamespaceName(parts[0], false)) == 0 &&
		len(apivalidation.ValidateServiceAccountName(parts[1], false)) == 0
}

// allocatedNode is the node an allocation selects by the single term
// metadata.name In [node], "" otherwise.
func allocatedNode(a *resourcev1.AllocationResult) string {
	if a == nil || a.NodeSelector == nil || len(a.NodeSelector.NodeSelectorTerms) != 1 {
		return ""
	}
	t := a.NodeSelector.NodeSelectorTerms[0]
	if len(t.MatchExpressions) != 0 || len(t.MatchFields) != 1 {
		return ""
	}
	f := t.MatchFields[0]
	if f.Key != "metadata.name" || f.Operator != corev1.NodeSelectorOpIn || len(f.Values) != 1 {
		return ""
	}
	return f.Values[0]
}

// changedDrivers are the drivers, in name order, with a device status
// added, removed or changed.
func changedDrivers(statuses, old []resourcev1.AllocatedDeviceStatus) []string {
	type key struct{ driver, pool, device, share string }
	keyOf := func(d resourcev1.AllocatedDeviceStatus) key {
		k := key{driver: d.Driver, pool: d.Pool, device: d.Device}
		if d.ShareID != nil {
			k.share = *d.ShareID
		}
		return k
	}
	before := map[key]resourcev1.AllocatedDeviceStatus{}
	for _, d := range old {
		before[keyOf(d)] = d
	}
	var out []string
	add := func(d string) {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	for _, d := range statuses {
		k := keyOf(d)
		o, ok := before[k]
		delete(before, k)
		if !ok || !apiequality.Semantic.DeepEqual(o, d) {
			add(d.Driver)
		}
	}
	for _, d := range before {
		add(d.Driver)
	}
	slices.Sort(out)
	return out
}
