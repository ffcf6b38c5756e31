package registry

import (
	"fmt"
	"maps"
	"slices"

	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of CSIDriver, CSIStorageCapacity and CSINode's spec, as
// upstream's pkg/apis/storage/validation (CSINode's status in
// storage_validate_csinode.go). Metadata is checked generically
// (pipeline.go). The declarative rules 1.37 generates for these kinds are
// alpha, so handwritten validation alone decides.

var (
	nodeTopologyFld = field.NewPath("nodeTopology")
	classNameFld    = field.NewPath("storageClassName")
)

func validateCSIDriverSpec(s *storagev1.CSIDriverSpec, gates FeatureGates) field.ErrorList {
	var errs field.ErrorList
	// Upstream names attachRequired "attachedRequired" in its errors.
	errs = append(errs, requiredBool(s.AttachRequired, true, specPath.Child("attachedRequired"))...)
	errs = append(errs, requiredBool(s.PodInfoOnMount, true, specPath.Child("podInfoOnMount"))...)
	errs = append(errs, requiredBool(s.StorageCapacity, true, specPath.Child("storageCapacity"))...)
	if p := s.FSGroupPolicy; p != nil && !slices.Contains(fsGroupPolicies, *p) {
		errs = append(errs, field.NotSupported(specPath.Child("fsGroupPolicy"), p, fsGroupPolicyNames()))
	}
	errs = append(errs, validateTokenRequests(s.TokenRequests, specPath.Child("tokenRequests"))...)
	for _, m := range s.VolumeLifecycleModes {
		if m != storagev1.VolumeLifecyclePersistent && m != storagev1.VolumeLifecycleEphemeral {
			errs = append(errs, field.NotSupported(specPath.Child("volumeLifecycleModes"), m,
				[]string{string(storagev1.VolumeLifecyclePersistent), string(storagev1.VolumeLifecycleEphemeral)}))
		}
	}
	errs = append(errs, requiredBool(s.SELinuxMount, gates.Enabled(gateSELinuxMount), specPath.Child("seLinuxMount"))...)
	if p := s.NodeAllocatableUpdatePeriodSeconds; p != nil && *p < 10 {
		errs = append(errs, field.Invalid(specPath.Child("nodeAllocatableUpdatePeriodSeconds"), *p, "must be greater than or equal to 10 seconds"))
	}
	if s.ServiceAccountTokenInSecrets != nil && len(s.TokenRequests) == 0 {
		errs = append(errs, field.Invalid(specPath.Child("serviceAccountTokenInSecrets"), s.ServiceAccountTokenInSecrets,
			"serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
	}
	return append(errs, requiredBool(s.PreventPodSchedulingIfMissing, gates.Enabled(gateVolumeLimitScaling),
		specPath.Child("preventPodSchedulingIfMissing"))...)
}

// requiredBool is the error of a field that must be set when required.
func requiredBool(v *bool, required bool, path *field.Path) field.ErrorList {
	if v == nil && required {
		return field.ErrorList{field.Required(path, "")}
	}
	return nil
}

var fsGroupPolicies = []storagev1.FSGroupPolicy{storagev1.FileFSGroupPolicy, storagev1.NoneFSGroupPolicy,
	storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy}

func fsGroupPolicyNames() []string {
	out := make([]string, len(fsGroupPolicies))
	for i, p := range fsGroupPolicies {
		out[i] = string(p)
	}
	return out
}

// validateTokenRequests: audiences are distinct (a repeated one is reported
// and its request not checked further), and each expiration, when set, is
// from ten minutes to 2^32 seconds.
func validateTokenRequests(requests []storagev1.TokenRequest, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, r := range requests {
		p := path.Index(i)
		if seen[r.Audience] {
			errs = append(errs, field.Duplicate(p.Child("audience"), r.Audience))
			continue
		}
		seen[r.Audience] = true
		if r.ExpirationSeconds == nil {
			continue
		}
		if s := *r.ExpirationSeconds; s < 600 {
			errs = append(errs, field.Invalid(p.Child("expirationSeconds"), s, "may not specify a duration less than 10 minutes"))
		}
		if s := *r.ExpirationSeconds; s > 1<<32 {
			errs = append(errs, field.Invalid(p.Child("expirationSeconds"), s, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	return errs
}

// validateCSIDriverUpdate checks the new spec, then that attachRequired and
// the volume lifecycle modes did not change.
func validateCSIDriverUpdate(d, old *storagev1.CSIDriver, gates FeatureGates) field.ErrorList {
	errs := validateCSIDriverSpec(&d.Spec, gates)
	errs = append(errs, apivalidation.ValidateImmutableField(d.Spec.AttachRequired, old.Spec.AttachRequired, specPath.Child("attachedRequired"))...)
	return append(errs, apivalidation.ValidateImmutableField(d.Spec.VolumeLifecycleModes, old.Spec.VolumeLifecycleModes,
		specPath.Child("volumeLifecycleModes"))...)
}

// validateCSIStorageCapacity checks the node topology selector (label
// values that are not valid label values are accepted on update when the
// stored selector has them), the class name and a non-negative capacity.
// The maximum volume size is not checked.
func validateCSIStorageCapacity(c *storagev1.CSIStorageCapacity, allowInvalidLabelValue bool) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
	errs := metav1validation.ValidateLabelSelector(c.NodeTopology, opts, nodeTopologyFld)
	for _, msg := range apivalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
		errs = append(errs, field.Invalid(classNameFld, c.StorageClassName, msg))
	}
	if q := c.Capacity; q != nil && q.Sign() < 0 {
		errs = append(errs, field.Invalid(field.NewPath("capacity"), q.String(), apivalidation.IsNegativeErrorMsg))
	}
	return errs
}

// validateCSIStorageCapacityUpdate: the fields a driver's GetCapacity call
// was made with, node topology and class, are immutable.
func validateCSIStorageCapacityUpdate(c, old *storagev1.CSIStorageCapacity) field.ErrorList {
	invalidBefore := len(metav1validation.ValidateLabelSelector(old.NodeTopology, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
	errs := validateCSIStorageCapacity(c, invalidBefore)
	if !apiequality.Semantic.DeepEqual(c.NodeTopology, old.NodeTopology) {
		errs = append(errs, field.Invalid(nodeTopologyFld, c.NodeTopology, fieldImmutable))
	}
	if c.StorageClassName != old.StorageClassName {
		errs = append(errs, field.Invalid(classNameFld, c.StorageClassName, fieldImmutable))
	}
	return errs
}

const fieldImmutable = "field is immutable"

// uniqueMessages is errs without the errors whose message an earlier one
// has. kube-apiserver 1.37 hands the handwritten errors of these kinds (of
// every kind it builds in) to its declarative-validation step, which
// rebuilds the list through an aggregate and so drops repeats (two
// unsupported volume lifecycle modes alike, two empty topology keys).
func uniqueMessages(errs field.ErrorList) field.ErrorList {
	if len(errs) < 2 {
		return errs
	}
	seen := make(map[string]bool, len(errs))
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		if msg := e.Error(); !seen[msg] {
			seen[msg] = true
			out = append(out, e)
		}
	}
	return out
}

// deprecatedNodeLabels are the node labels upstream warns about, with why
// (pkg/api/node).
var deprecatedNodeLabels = map[string]string{
	"beta.kubernetes.io/arch":                       `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	"beta.kubernetes.io/os":                         `deprecated since v1.14; use "kubernetes.io/os" instead`,
	"failure-domain.beta.kubernetes.io/region":      `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	"failure-domain.beta.kubernetes.io/zone":        `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	"beta.kubernetes.io/instance-type":              `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
	"app.kubernetes.io/created-by":                  `deprecated since v1.9`,
	"scheduler.alpha.kubernetes.io/preferAvoidPods": `deprecated since v1.22; use Taints and Tolerations instead`,
	"node-role.kubernetes.io/master":                `use "node-role.kubernetes.io/control-plane" instead`,
}

// nodeTopologyWarnings are a CSIStorageCapacity's warnings: one per
// deprecated node label its topology selects on, expressions first, then
// labels (in key order; upstream's is map order).
func nodeTopologyWarnings(sel *metav1.LabelSelector) []string {
	if sel == nil {
		return nil
	}
	var out []string
	for i, e := range sel.MatchExpressions {
		if msg, ok := deprecatedNodeLabels[e.Key]; ok {
			out = append(out, fmt.Sprintf("%s: %s is %s", nodeTopologyFld.Child("matchExpressions").Index(i).Child("key"), e.Key, msg))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(sel.MatchLabels)) {
		if msg, ok := deprecatedNodeLabels[k]; ok {
			out = append(out, fmt.Sprintf("%s: %s", nodeTopologyFld.Child("matchLabels").Child(k), msg))
		}
	}
	return out
}
