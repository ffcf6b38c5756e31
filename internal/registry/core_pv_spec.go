package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePVSpec is upstream's ValidatePersistentVolumeSpec: inline says
// the spec is a VolumeAttachment's inline volume spec, which must be CSI
// and may not carry a claim, capacity, node affinity, storage class,
// reclaim policy other than Retain or volume mode other than Filesystem.
func validatePVSpec(s *corev1.PersistentVolumeSpec, pvName string, inline bool, p *field.Path, opts pvValidationOptions) field.ErrorList {
	var errs field.ErrorList
	if inline {
		if s.ClaimRef != nil {
			errs = append(errs, field.Forbidden(p.Child("claimRef"), inlineVolumeContext))
		}
		if len(s.Capacity) != 0 {
			errs = append(errs, field.Forbidden(p.Child("capacity"), inlineVolumeContext))
		}
		if s.CSI == nil {
			errs = append(errs, field.Required(p.Child("csi"), "has to be specified in the context of inline volumes"))
		}
	}
	errs = append(errs, validatePVAccessModes(s.AccessModes, p.Child("accessModes"))...)
	if !inline {
		errs = append(errs, validatePVCapacity(s.Capacity, p.Child("capacity"))...)
	}
	errs = append(errs, validateReclaimPolicy(s.PersistentVolumeReclaimPolicy, inline, p.Child("persistentVolumeReclaimPolicy"))...)
	affinitySet := false
	if s.NodeAffinity != nil {
		if inline {
			errs = append(errs, field.Forbidden(p.Child("nodeAffinity"), inlineVolumeContext))
		} else {
			affinitySet = true
			errs = append(errs, validateVolumeNodeAffinity(s.NodeAffinity, opts, p.Child("nodeAffinity"))...)
		}
	}
	errs = append(errs, validatePVSource(&s.PersistentVolumeSource, pvName, affinitySet, p)...)
	if hostPathIsRoot(&s.PersistentVolumeSource) && s.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		errs = append(errs, field.Forbidden(p.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	if s.StorageClassName != "" {
		if inline {
			errs = append(errs, field.Forbidden(p.Child("storageClassName"), inlineVolumeContext))
		} else {
			errs = append(errs, className(s.StorageClassName, p.Child("storageClassName"))...)
		}
	}
	errs = append(errs, validatePVVolumeMode(s.VolumeMode, inline, p.Child("volumeMode"))...)
	if vac := s.VolumeAttributesClassName; vac != nil && opts.volumeAttributesClass {
		if *vac == "" {
			errs = append(errs, field.Required(p.Child("volumeAttributesClassName"), "an empty string is disallowed"))
		} else {
			errs = append(errs, className(*vac, p.Child("volumeAttributesClassName"))...)
		}
		if s.CSI == nil {
			errs = append(errs, field.Required(p.Child("csi"), "has to be specified when using volumeAttributesClassName"))
		}
	}
	return errs
}

func className(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

func validatePVAccessModes(modes []corev1.PersistentVolumeAccessMode, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(modes) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	rwop, other := false, false
	for _, mode := range modes {
		if !supportedAccessModes.Has(mode) {
			errs = append(errs, field.NotSupported(p, mode, sets.List(supportedAccessModes)))
		}
		rwop = rwop || mode == corev1.ReadWriteOncePod
		other = other || (mode != corev1.ReadWriteOncePod && supportedAccessModes.Has(mode))
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

// validatePVCapacity: storage, and only storage, a positive quantity
// (errors of several keys come in map order, as upstream's).
func validatePVCapacity(capacity corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(capacity) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	if _, ok := capacity[corev1.ResourceStorage]; !ok || len(capacity) > 1 {
		errs = append(errs, field.NotSupported(p, capacity, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	for name, q := range capacity {
		kp := p.Key(string(name))
		if q.Value() < 0 {
			errs = append(errs, field.Invalid(kp, q.Value(), "must be a valid resource quantity"))
		}
		if q.Cmp(resource.Quantity{}) <= 0 {
			errs = append(errs, field.Invalid(kp, q.String(), isNotPositiveErrorMsg))
		}
	}
	return errs
}

func validateReclaimPolicy(policy corev1.PersistentVolumeReclaimPolicy, inline bool, p *field.Path) field.ErrorList {
	switch {
	case policy == "":
		return nil
	case inline && policy != corev1.PersistentVolumeReclaimRetain:
		return field.ErrorList{field.Forbidden(p, "may only be "+string(corev1.PersistentVolumeReclaimRetain)+" in the context of inline volumes")}
	case !inline && !supportedReclaimPolicies.Has(policy):
		return field.ErrorList{field.NotSupported(p, policy, sets.List(supportedReclaimPolicies))}
	}
	return nil
}

func validatePVVolumeMode(mode *corev1.PersistentVolumeMode, inline bool, p *field.Path) field.ErrorList {
	switch {
	case mode == nil:
		return nil
	case inline && *mode != corev1.PersistentVolumeFilesystem:
		return field.ErrorList{field.Forbidden(p, "may not specify volumeMode other than "+string(corev1.PersistentVolumeFilesystem)+" in the context of inline volumes")}
	case !inline && !supportedVolumeModes.Has(*mode):
		return field.ErrorList{field.NotSupported(p, *mode, sets.List(supportedVolumeModes))}
	}
	return nil
}

// validateVolumeNodeAffinity: required node constraints, a valid node
// selector (invalid label values allowed when the stored volume has some).
func validateVolumeNodeAffinity(a *corev1.VolumeNodeAffinity, opts pvValidationOptions, p *field.Path) field.ErrorList {
	if a.Required == nil {
		return field.ErrorList{field.Required(p.Child("required"), "must specify required node constraints")}
	}
	errs := nodeSelector(a.Required, p.Child("required"))
	if !opts.allowInvalidNodeAffinityValues {
		return errs
	}
	out := errs[:0]
	for _, e := range errs {
		if e.Origin != "format=k8s-label-value" {
			out = append(out, e)
		}
	}
	return out
}

// validatePVSource requires exactly one source (but for upstream's
// flexVolume leniency) and validates it; a local volume needs node
// affinity.
func validatePVSource(s *corev1.PersistentVolumeSource, pvName string, affinitySet bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, src := range pvSources {
		if !src.set(s) {
			continue
		}
		if n > 0 && src.forbidName != "" {
			errs = append(errs, field.Forbidden(p.Child(src.forbidName), "may not specify more than 1 volume type"))
			continue
		}
		n++
		errs = append(errs, src.validate(s, pvName, p.Child(src.name))...)
		if src.name == "local" && !affinitySet {
			errs = append(errs, field.Required(p.Child("nodeAffinity"), "Local volume requires node affinity"))
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

// pvWarnings are upstream's GetWarningsForPersistentVolume: deprecated
// annotations, the Recycle policy, deprecated node labels in the node
// affinity, and the sources that no longer work.
func pvWarnings(pv *corev1.PersistentVolume) []string {
	var out []string
	for _, a := range []struct{ key, msg string }{
		{"volume.beta.kubernetes.io/storage-class", `deprecated since v1.8; use "storageClassName" attribute instead`},
		{"volume.beta.kubernetes.io/mount-options", `deprecated since v1.31; use "mountOptions" attribute instead`},
	} {
		if _, ok := pv.Annotations[a.key]; ok {
			out = append(out, fmt.Sprintf("%s: %s", metadataPath.Child("annotations").Key(a.key), a.msg))
		}
	}
	s := &pv.Spec
	if s.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		out = append(out, fmt.Sprintf("%s: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.",
			specPath.Child("persistentVolumeReclaimPolicy")))
	}
	if s.NodeAffinity != nil && s.NodeAffinity.Required != nil {
		tp := specPath.Child("nodeAffinity", "required", "nodeSelectorTerms")
		for i, t := range s.NodeAffinity.Required.NodeSelectorTerms {
			for j, e := range t.MatchExpressions {
				if msg, ok := deprecatedNodeLabels[e.Key]; ok {
					out = append(out, fmt.Sprintf("%s: %s is %s", tp.Index(i).Child("matchExpressions").Index(j).Child("key"), e.Key, msg))
				}
			}
		}
	}
	for _, d := range []struct {
		set        bool
		name, what string
	}{
		{s.CephFS != nil, "cephfs", "deprecated in v1.28, non-functional in v1.31+"},
		{s.PhotonPersistentDisk != nil, "photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"},
		{s.ScaleIO != nil, "scaleIO", "deprecated in v1.16, non-functional in v1.22+"},
		{s.StorageOS != nil, "storageOS", "deprecated in v1.22, non-functional in v1.25+"},
		{s.Glusterfs != nil, "glusterfs", "deprecated in v1.25, non-functional in v1.26+"},
		{s.RBD != nil, "rbd", "deprecated in v1.28, non-functional in v1.31+"},
	} {
		if d.set {
			out = append(out, fmt.Sprintf("%s: %s", specPath.Child(d.name), d.what))
		}
	}
	return out
}
