package registry

import (
	"bytes"
	"encoding/json"

	"github.com/pmezard/go-difflib/difflib"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PersistentVolume's strategy, as upstream's pkg/registry/core/persistentvolume
// with 1.37's default gates (VolumeAttributesClass on, MutablePVNodeAffinity
// off): a create starts Pending with an empty status, a write keeps the
// stored status, a status write keeps the stored spec and sets the phase
// transition time when the phase changes; validation is upstream's
// ValidatePersistentVolume (the spec, then the mount-options annotation
// rule), plus on update the immutable source, volume mode and node
// affinity. kube-apiserver runs PersistentVolume's declarative validation,
// whose step drops an error repeating an earlier message (the update
// checks the spec twice), so admitd does too.

const inlineVolumeContext = "may not be specified in the context of inline volumes"

var supportedReclaimPolicies = sets.New(corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle, corev1.PersistentVolumeReclaimRetain)

var supportedVolumeModes = sets.New(corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)

// pvValidationOptions are upstream's PersistentVolumeSpecValidationOptions.
type pvValidationOptions struct {
	// volumeAttributesClass: check the class name (on for volumes, where
	// 1.37 locks the gate on; off for inline volume specs).
	volumeAttributesClass bool
	// allowInvalidNodeAffinityValues: the stored volume's node affinity
	// has invalid label values, so the update may keep them.
	allowInvalidNodeAffinityValues bool
}

func pvOptions(old *corev1.PersistentVolume) pvValidationOptions {
	opts := pvValidationOptions{volumeAttributesClass: true}
	if old != nil && old.Spec.NodeAffinity != nil && old.Spec.NodeAffinity.Required != nil {
		opts.allowInvalidNodeAffinityValues = hasInvalidLabelValue(old.Spec.NodeAffinity.Required.NodeSelectorTerms)
	}
	return opts
}

func hasInvalidLabelValue(terms []corev1.NodeSelectorTerm) bool {
	for _, t := range terms {
		for _, e := range t.MatchExpressions {
			for _, v := range e.Values {
				if len(validation.IsValidLabelValue(v)) > 0 {
					return true
				}
			}
		}
	}
	return false
}

func persistentVolumeStrategy() Strategy {
	return Strategy{
		Default:          defaultPV,
		PrepareForCreate: preparePVForCreate,
		Validate: func(obj runtime.Object) field.ErrorList {
			return uniqueMessages(validatePV(obj.(*corev1.PersistentVolume), pvOptions(nil)))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			return uniqueMessages(validatePVUpdate(obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume)))
		},
		Warnings: func(obj, _ runtime.Object) []string { return pvWarnings(obj.(*corev1.PersistentVolume)) },
		Subresources: map[string]SubresourceStrategy{"status": {
			PrepareForUpdate: func(obj, old runtime.Object, _ FeatureGates) {
				preparePVStatusWrite(obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume))
			},
			ValidateUpdate: func(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
				// The common checks of every update (a path-segment name),
				// then upstream's ValidatePersistentVolumeStatusUpdate.
				errs := append(ValidateObjectMeta(obj, false, nil), ValidateObjectMetaUpdate(obj, old)...)
				if obj.(*corev1.PersistentVolume).ResourceVersion == "" {
					errs = append(errs, field.Required(field.NewPath("resourceVersion"), ""))
				}
				return errs
			},
		}},
	}
}

// preparePVStatusWrite keeps the stored spec; the phase transition time
// stays when the phase does and none is sent, and is now when the phase
// changes without a new time.
func preparePVStatusWrite(pv, old *corev1.PersistentVolume) {
	pv.Spec = *old.Spec.DeepCopy()
	switch t := pv.Status.LastPhaseTransitionTime; {
	case old.Status.Phase == pv.Status.Phase && t == nil:
		pv.Status.LastPhaseTransitionTime = old.Status.LastPhaseTransitionTime.DeepCopy()
	case old.Status.Phase != pv.Status.Phase && (t == nil || t.Equal(old.Status.LastPhaseTransitionTime)):
		now := metav1.Now()
		pv.Status.LastPhaseTransitionTime = &now
	}
}

// validatePV is upstream's ValidatePersistentVolume less the metadata
// (checked generically), then the mount-options annotation rule.
func validatePV(pv *corev1.PersistentVolume, opts pvValidationOptions) field.ErrorList {
	errs := validatePVSpec(&pv.Spec, pv.Name, false, specPath, opts)
	return append(errs, validatePVMountOptionsAnnotation(pv)...)
}

func validatePVUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	opts := pvOptions(old)
	errs := validatePV(pv, opts)
	// Upstream's ValidatePersistentVolumeUpdate validates the whole volume
	// again, metadata included; the spec's errors repeat and are dropped.
	errs = append(errs, ValidateObjectMeta(pv, false, apivalidation.NameIsDNSSubdomain)...)
	src := pv.Spec.PersistentVolumeSource
	if old.Spec.CSI != nil && old.Spec.CSI.ControllerExpandSecretRef == nil && src.CSI != nil && src.CSI.ControllerExpandSecretRef != nil {
		// A controller expand secret may be added.
		src.CSI = src.CSI.DeepCopy()
		src.CSI.ControllerExpandSecretRef = nil
	}
	if !apiequality.Semantic.DeepEqual(src, old.Spec.PersistentVolumeSource) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"),
			"spec.persistentvolumesource is immutable after creation\n"+internalJSONDiff(old.Spec.PersistentVolumeSource, src)))
	}
	errs = append(errs, apivalidation.ValidateImmutableField(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil && !nodeAffinityEqualButGALabels(pv.Spec.NodeAffinity, old.Spec.NodeAffinity) {
		errs = append(errs, field.Invalid(field.NewPath("nodeAffinity"), internalJSON(pv.Spec.NodeAffinity),
			fieldImmutable+", except for updating from beta label to GA"))
	}
	if old.Spec.VolumeAttributesClassName != nil && pv.Spec.VolumeAttributesClassName == nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to nil is forbidden"))
	}
	return errs
}

// internalJSONDiff is how upstream shows a changed value in an error: a
// unified diff (three lines of context) of the two values as their
// internal types render in indented JSON.
func internalJSONDiff(old, cur any) string {
	indent := func(v any) string {
		var b bytes.Buffer
		if err := json.Indent(&b, internalJSON(v), "", " "); err != nil {
			return ""
		}
		return b.String()
	}
	out, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(indent(old)), B: difflib.SplitLines(indent(cur)), Context: 3})
	if err != nil {
		return "error generating diff: " + err.Error()
	}
	return out
}

// betaToGALabels are the node labels a volume's node affinity may move
// from beta to GA.
var betaToGALabels = map[string]string{
	corev1.LabelFailureDomainBetaZone:   corev1.LabelTopologyZone,
	corev1.LabelFailureDomainBetaRegion: corev1.LabelTopologyRegion,
	"beta.kubernetes.io/os":             corev1.LabelOSStable,
	"beta.kubernetes.io/arch":           corev1.LabelArchStable,
	corev1.LabelInstanceType:            corev1.LabelInstanceTypeStable,
}

// nodeAffinityEqualButGALabels says whether two node affinities are
// semantically equal once every requirement of old on a beta label that
// cur moved to its GA label is read with the GA key.
func nodeAffinityEqualButGALabels(cur, old *corev1.VolumeNodeAffinity) bool {
	if cur == nil || old == nil || cur.Required == nil || old.Required == nil ||
		len(cur.Required.NodeSelectorTerms) != len(old.Required.NodeSelectorTerms) {
		return apiequality.Semantic.DeepEqual(cur, old)
	}
	masked := old.DeepCopy()
	for i := range masked.Required.NodeSelectorTerms {
		t, ct := &masked.Required.NodeSelectorTerms[i], cur.Required.NodeSelectorTerms[i]
		maskGALabels(t.MatchExpressions, ct.MatchExpressions)
		maskGALabels(t.MatchFields, ct.MatchFields)
	}
	return apiequality.Semantic.DeepEqual(cur, masked)
}

func maskGALabels(old, cur []corev1.NodeSelectorRequirement) {
	if len(old) != len(cur) {
		return
	}
	for j := range old {
		if old[j].Key != cur[j].Key && betaToGALabels[old[j].Key] == cur[j].Key {
			old[j].Key = cur[j].Key
		}
	}
}

// takesMountOptions says whether a source takes the mount-options
// annotation.
func takesMountOptions(s *corev1.PersistentVolumeSource) bool {
	return s.GCEPersistentDisk != nil || s.AWSElasticBlockStore != nil || s.Glusterfs != nil || s.NFS != nil ||
		s.RBD != nil || s.Quobyte != nil || s.ISCSI != nil || s.Cinder != nil || s.CephFS != nil || s.AzureFile != nil ||
		s.VsphereVolume != nil || s.AzureDisk != nil || s.PhotonPersistentDisk != nil
}

// validatePVMountOptionsAnnotation is upstream's pkg/volume/validation rule:
// the beta mount-options annotation only on sources that take it.
func validatePVMountOptionsAnnotation(pv *corev1.PersistentVolume) field.ErrorList {
	const key = corev1.MountOptionAnnotation
	if _, ok := pv.Annotations[key]; !ok || takesMountOptions(&pv.Spec.PersistentVolumeSource) {
		return nil
	}
	return field.ErrorList{field.Forbidden(metadataPath.Child("annotations", key), "may not specify mount options for this volume type")}
}
