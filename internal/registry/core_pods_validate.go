package registry

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Pod and PodSpec validation (upstream ValidatePodCreate,
// validatePodMetadataAndSpec, ValidatePodSpec, ValidatePodTemplateSpec).
// Metadata itself is validated generically (ValidateObjectMeta).

var specPath = field.NewPath("spec")

const (
	mirrorPodAnnotation   = "kubernetes.io/config.mirror"
	podDeletionCostKey    = "controller.kubernetes.io/pod-deletion-cost"
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
	isNotPositiveErrorMsg = "must be greater than zero"
)

// validatePodCreate validates a new Pod (metadata excluded).
func validatePodCreate(pod *corev1.Pod) field.ErrorList {
	errs := validatePodMetadataAndSpec(pod, nil)
	if len(pod.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
		errs = append(errs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	return errs
}

// validatePodMetadataAndSpec checks the pod-specific annotations and the
// spec, plus the rules that apply to pods but not templates; old is the
// stored pod of an update (nil on create), whose use of a rule's field keeps
// it allowed.
func validatePodMetadataAndSpec(pod, old *corev1.Pod) field.ErrorList {
	var oldAnnotations map[string]string
	var oldSpec *corev1.PodSpec
	if old != nil {
		oldAnnotations, oldSpec = old.Annotations, &old.Spec
	}
	// An invalid deletion cost already stored stays allowed.
	_, oldCostErr := parseDeletionCost(oldAnnotations)
	errs := validatePodAnnotations(pod.Annotations, &pod.Spec, metadataPath.Child("annotations"), oldAnnotations != nil && oldCostErr != nil)
	errs = append(errs, validatePodSpec(&pod.Spec, &pod.ObjectMeta, specPath, true, hasNonSidecarRestartContainer(oldSpec))...)
	if pod.Spec.ServiceAccountName == "" {
		for vi, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for si, src := range v.Projected.Sources {
				if src.ServiceAccountToken != nil {
					errs = append(errs, field.Forbidden(specPath.Child("volumes").Index(vi).Child("projected", "sources").Index(si).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	for i := range pod.Spec.Containers {
		errs = append(errs, validateImageWhitespace(&pod.Spec.Containers[i], specPath.Child("containers").Index(i))...)
	}
	for i := range pod.Spec.InitContainers {
		errs = append(errs, validateImageWhitespace(&pod.Spec.InitContainers[i], specPath.Child("initContainers").Index(i))...)
	}
	return errs
}

func validatePodAnnotations(annotations map[string]string, spec *corev1.PodSpec, path *field.Path, allowInvalidCost bool) field.ErrorList {
	var errs field.ErrorList
	if v, ok := annotations[mirrorPodAnnotation]; ok && spec.NodeName == "" {
		errs = append(errs, field.Invalid(path.Key(mirrorPodAnnotation), v, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if _, err := parseDeletionCost(annotations); err != nil && !allowInvalidCost {
		errs = append(errs, field.Invalid(path.Key(podDeletionCostKey), annotations[podDeletionCostKey], "must be a 32bit integer"))
	}
	return errs
}

func parseDeletionCost(annotations map[string]string) (int32, error) {
	v, ok := annotations[podDeletionCostKey]
	if !ok {
		return 0, nil
	}
	// No sign, no leading zeros.
	if v == "" || !(v[0] == '-' || v == "0" || (v[0] >= '1' && v[0] <= '9')) {
		return 0, fmt.Errorf("invalid value %q", v)
	}
	n, err := strconv.ParseInt(v, 10, 32)
	return int32(n), err
}

// validatePodTemplateSpec validates a pod template embedded in another
// object.
func validatePodTemplateSpec(t *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, fldPath.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, fldPath.Child("annotations"))...)
	errs = append(errs, validatePodAnnotations(t.Annotations, &t.Spec, fldPath.Child("annotations"), false)...)
	errs = append(errs, validatePodSpec(&t.Spec, nil, fldPath.Child("spec"), false, true)...)
	if len(t.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(fldPath.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return errs
}

// validatePodSpec validates a PodSpec; podMeta is set for real pods only.
// restartContainerAllowed: non-sidecar init containers may keep a
// RestartContainer resize policy (the stored pod has one).
func validatePodSpec(spec *corev1.PodSpec, podMeta *metav1.ObjectMeta, fldPath *field.Path, isPod, restartContainerAllowed bool) field.ErrorList {
	var errs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		errs = append(errs, field.Required(fldPath.Child("terminationGracePeriodSeconds"), ""))
	}
	grace := spec.TerminationGracePeriodSeconds
	vols, vErrs := validateVolumes(spec.Volumes, podMeta, fldPath.Child("volumes"))
	errs = append(errs, vErrs...)
	claims, cErrs := validatePodResourceClaims(spec.ResourceClaims, fldPath.Child("resourceClaims"))
	errs = append(errs, cErrs...)
	errs = append(errs, validateContainers(spec.Containers, vols, claims, grace, fldPath.Child("containers"), spec.RestartPolicy)...)
	errs = append(errs, validateInitContainers(spec.InitContainers, spec.Containers, vols, claims, grace, fldPath.Child("initContainers"), spec.RestartPolicy, restartContainerAllowed)...)
	errs = append(errs, validateEphemeralContainers(spec.EphemeralContainers, spec.Containers, spec.InitContainers, vols, claims, fldPath.Child("ephemeralContainers"), spec.RestartPolicy)...)
	errs = append(errs, validatePodLevelResources(spec, claims, fldPath)...)
	errs = append(errs, validateHostNetworkPorts(spec, fldPath, isPod)...)
	errs = append(errs, validateRestartPolicy(spec.RestartPolicy, fldPath.Child("restartPolicy"))...)
	errs = append(errs, validateDNSPolicy(spec.DNSPolicy, fldPath.Child("dnsPolicy"))...)
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	errs = append(errs, validatePodSecurityContext(spec.SecurityContext, fldPath.Child("securityContext"))...)
	errs = append(errs, validateDNSConfig(spec.DNSConfig, spec.DNSPolicy, fldPath.Child("dnsConfig"))...)
	for i, g := range spec.ReadinessGates {
		errs = append(errs, qualifiedName(string(g.ConditionType), fldPath.Child("readinessGates").Index(i).Child("conditionType"))...)
	}
	errs = append(errs, validateSchedulingGates(spec.SchedulingGates, fldPath.Child("schedulingGates"))...)
	errs = append(errs, validateTopologySpread(spec.TopologySpreadConstraints, fldPath.Child("topologySpreadConstraints"))...)
	return append(errs, validatePodSpecScalars(spec, fldPath)...)
}

// validatePodSpecScalars covers the single-valued PodSpec fields.
func validatePodSpecScalars(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	nameChecks := []struct {
		value string
		path  string
		fn    apivalidation.ValidateNameFunc
	}{
		{spec.ServiceAccountName, "serviceAccountName", apivalidation.ValidateServiceAccountName},
		{spec.NodeName, "nodeName", apivalidation.NameIsDNSSubdomain},
	}
	for _, c := range nameChecks {
		if c.value == "" {
			continue
		}
		for _, msg := range c.fn(c.value, false) {
			errs = append(errs, field.Invalid(fldPath.Child(c.path), c.value, msg))
		}
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > math.MaxInt32) {
		errs = append(errs, field.Invalid(fldPath.Child("activeDeadlineSeconds"), *d, validation.InclusiveRangeError(1, math.MaxInt32)))
	}
	if spec.Hostname != "" {
		errs = append(errs, dns1123Label(spec.Hostname, fldPath.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		errs = append(errs, dns1123Label(spec.Subdomain, fldPath.Child("subdomain"))...)
	}
	if len(spec.Tolerations) > 0 {
		errs = append(errs, validateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	}
	for i, a := range spec.HostAliases {
		errs = append(errs, validation.IsValidIP(fldPath.Child("hostAliases").Index(i).Child("ip"), a.IP)...)
		for j, h := range a.Hostnames {
			errs = append(errs, dns1123Subdomain(h, fldPath.Child("hostAliases").Index(i).Child("hostnames").Index(j))...)
		}
	}
	if spec.PriorityClassName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(spec.PriorityClassName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("priorityClassName"), spec.PriorityClassName, msg))
		}
	}
	if spec.RuntimeClassName != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*spec.RuntimeClassName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("runtimeClassName"), *spec.RuntimeClassName, msg))
		}
	}
	if p := spec.PreemptionPolicy; p != nil {
		errs = append(errs, validatePreemptionPolicy(p, fldPath.Child("preemptionPolicy"))...)
	}
	if os := spec.OS; os != nil {
		if os.Name == "" {
			errs = append(errs, field.Required(fldPath.Child("os", "name"), "cannot be empty"))
		} else if os.Name != corev1.Linux && os.Name != corev1.Windows {
			errs = append(errs, field.NotSupported(fldPath.Child("os"), os.Name, []corev1.OSName{corev1.Linux, corev1.Windows}))
		}
	}
	return errs
}

func validatePodResourceClaims(claims []corev1.PodResourceClaim, fldPath *field.Path) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	all, seen := sets.New[string](), sets.New[string]()
	for _, c := range claims {
		if c.Name != "" {
			all.Insert(c.Name)
		}
	}
	for i, c := range claims {
		path := fldPath.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(path.Child("name"), ""))
		case seen.Has(c.Name):
			errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
		default:
			errs = append(errs, dns1123Label(c.Name, path.Child("name"))...)
			seen.Insert(c.Name)
		}
		if c.ResourceClaimName != nil && c.ResourceClaimTemplateName != nil {
			errs = append(errs, field.Invalid(path, c, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"))
		}
		if c.ResourceClaimName == nil && c.ResourceClaimTemplateName == nil {
			errs = append(errs, field.Invalid(path, c, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
		}
	}
	return all, errs
}

func validateHostNetworkPorts(spec *corev1.PodSpec, fldPath *field.Path, isPod bool) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var errs field.ErrorList
	for i, c := range spec.Containers {
		for j, p := range c.Ports {
			if (isPod || p.HostPort != 0) && p.HostPort != p.ContainerPort {
				errs = append(errs, field.Invalid(fldPath.Child("containers").Index(i).Child("ports").Index(j).Child("hostPort"), p.HostPort, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return errs
}

func validateRestartPolicy(p corev1.RestartPolicy, path *field.Path) field.ErrorList {
	switch p {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
		return nil
	case "":
		return field.ErrorList{field.Required(path, "")}
	}
	return field.ErrorList{field.NotSupported(path, p, []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever})}
}

func validateDNSPolicy(p corev1.DNSPolicy, path *field.Path) field.ErrorList {
	switch p {
	case corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone:
		return nil
	case "":
		return field.ErrorList{field.Required(path, "")}
	}
	return field.ErrorList{field.NotSupported(path, p, []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone})}
}

func validatePodSecurityContext(sc *corev1.PodSecurityContext, path *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.FSGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.FSGroup) {
			errs = append(errs, field.Invalid(path.Child("fsGroup"), *sc.FSGroup, msg))
		}
	}
	if sc.RunAsUser != nil {
		for _, msg := range validation.IsValidUserID(*sc.RunAsUser) {
			errs = append(errs, field.Invalid(path.Child("runAsUser"), *sc.RunAsUser, msg))
		}
	}
	if sc.RunAsGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
			errs = append(errs, field.Invalid(path.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	for i, gid := range sc.SupplementalGroups {
		for _, msg := range validation.IsValidGroupID(gid) {
			errs = append(errs, field.Invalid(path.Child("supplementalGroups").Index(i), gid, msg))
		}
	}
	return errs
}

func validateDNSConfig(c *corev1.PodDNSConfig, policy corev1.DNSPolicy, path *field.Path) field.ErrorList {
	if policy == corev1.DNSNone {
		if c == nil {
			return field.ErrorList{field.Required(path, fmt.Sprintf("must provide `dnsConfig` when `dnsPolicy` is %s", corev1.DNSNone))}
		}
		if len(c.Nameservers) == 0 {
			return field.ErrorList{field.Required(path.Child("nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when `dnsPolicy` is %s", corev1.DNSNone))}
		}
	}
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	if len(c.Nameservers) > maxDNSNameservers {
		errs = append(errs, field.Invalid(path.Child("nameservers"), c.Nameservers, fmt.Sprintf("must not have more than %v nameservers", maxDNSNameservers)))
	}
	for i, ns := range c.Nameservers {
		errs = append(errs, validation.IsValidIP(path.Child("nameservers").Index(i), ns)...)
	}
	if len(c.Searches) > maxDNSSearchPaths {
		errs = append(errs, field.Invalid(path.Child("searches"), c.Searches, fmt.Sprintf("must not have more than %v search paths", maxDNSSearchPaths)))
	}
	if len(strings.Join(c.Searches, " ")) > maxDNSSearchListChars {
		errs = append(errs, field.Invalid(path.Child("searches"), c.Searches, fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, s := range c.Searches {
		if s == "." {
			continue // RelaxedDNSSearchValidation is GA
		}
		s = strings.TrimSuffix(s, ".")
		for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(s) {
			errs = append(errs, field.Invalid(path.Child("searches").Index(i), s, msg))
		}
	}
	for i, o := range c.Options {
		if o.Name == "" {
			errs = append(errs, field.Required(path.Child("options").Index(i), "must not be empty"))
		}
	}
	return errs
}

func validateSchedulingGates(gates []corev1.PodSchedulingGate, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, g := range gates {
		errs = append(errs, qualifiedName(g.Name, path.Index(i))...)
		if seen.Has(g.Name) {
			errs = append(errs, field.Duplicate(path.Index(i), g.Name))
		}
		seen.Insert(g.Name)
	}
	return errs
}

func validateTopologySpread(constraints []corev1.TopologySpreadConstraint, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	actions := []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}
	for i, c := range constraints {
		path := fldPath.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(path.Child("maxSkew"), c.MaxSkew, isNotPositiveErrorMsg))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(path.Child("topologyKey"), "can not be empty"))
		}
		if c.WhenUnsatisfiable != corev1.DoNotSchedule && c.WhenUnsatisfiable != corev1.ScheduleAnyway {
			errs = append(errs, field.NotSupported(path.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, actions))
		}
		for _, other := range constraints[i+1:] {
			if c.TopologyKey == other.TopologyKey && c.WhenUnsatisfiable == other.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(path.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				errs = append(errs, field.Invalid(path.Child("minDomains"), c.MinDomains, isNotPositiveErrorMsg))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				errs = append(errs, field.Invalid(path.Child("minDomains"), c.MinDomains, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, path.Child("labelSelector"))...)
	}
	return errs
}

func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		path := fldPath.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, path.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(path.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(path.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				errs = append(errs, field.Invalid(path.Child("operator"), t.Value, strings.Join(msgs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(path.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		case corev1.TolerationOpLt, corev1.TolerationOpGt:
			// The comparison operators' gate (TaintTolerationComparisonOperators)
			// is off in 1.37: upstream names them among the supported values.
			errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual,
				corev1.TolerationOpExists, corev1.TolerationOpLt, corev1.TolerationOpGt}))
		default:
			errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
	}
	return errs
}
