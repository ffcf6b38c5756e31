package registry

import (
	"encoding/json"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of the core/v1 kinds other than Pod and Service (upstream
// pkg/apis/core/validation/validation.go). Metadata is validated generically.

const immutableWhenSetMsg = "field is immutable when `immutable` is set"

func validateConfigMap(obj runtime.Object) field.ErrorList {
	cm := obj.(*corev1.ConfigMap)
	var errs field.ErrorList
	total := 0
	for _, key := range sortedKeys(cm.Data) {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, msg))
		}
		if _, dup := cm.BinaryData[key]; dup {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, "duplicate of key present in binaryData"))
		}
		total += len(cm.Data[key])
	}
	for _, key := range sortedKeys(cm.BinaryData) {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(key), key, msg))
		}
		total += len(cm.BinaryData[key])
	}
	if total > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return errs
}

func validateConfigMapUpdate(obj, old runtime.Object) field.ErrorList {
	cm, oldCM := obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap)
	var errs field.ErrorList
	if oldCM.Immutable != nil && *oldCM.Immutable {
		if cm.Immutable == nil || !*cm.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableWhenSetMsg))
		}
		if !reflect.DeepEqual(cm.Data, oldCM.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableWhenSetMsg))
		}
		if !reflect.DeepEqual(cm.BinaryData, oldCM.BinaryData) {
			errs = append(errs, field.Forbidden(field.NewPath("binaryData"), immutableWhenSetMsg))
		}
	}
	return append(errs, validateConfigMap(obj)...)
}

func validateSecret(obj runtime.Object) field.ErrorList {
	s := obj.(*corev1.Secret)
	var errs field.ErrorList
	dataPath := field.NewPath("data")
	total := 0
	for _, key := range sortedKeys(s.Data) {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(dataPath.Key(key), key, msg))
		}
		total += len(s.Data[key])
	}
	if total > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}
	return append(errs, validateSecretType(s, dataPath)...)
}

// validateSecretType checks the keys each well-known secret type requires.
func validateSecretType(s *corev1.Secret, dataPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(metadataPath.Child("annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg, corev1.SecretTypeDockerConfigJson:
		key := corev1.DockerConfigKey
		if s.Type == corev1.SecretTypeDockerConfigJson {
			key = corev1.DockerConfigJsonKey
		}
		data, ok := s.Data[key]
		if !ok {
			return append(errs, field.Required(dataPath.Key(key), ""))
		}
		if err := json.Unmarshal(data, &map[string]any{}); err != nil {
			errs = append(errs, field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error()))
		}
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, pass := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			errs = append(errs, field.Required(dataPath.Key(corev1.BasicAuthUsernameKey), ""),
				field.Required(dataPath.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(dataPath.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		for _, key := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
			if _, ok := s.Data[key]; !ok {
				errs = append(errs, field.Required(dataPath.Key(key), ""))
			}
		}
	}
	return errs
}

func validateSecretUpdate(obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*corev1.Secret), old.(*corev1.Secret)
	errs := apivalidation.ValidateImmutableField(s.Type, oldS.Type, field.NewPath("type"))
	if oldS.Immutable != nil && *oldS.Immutable {
		if s.Immutable == nil || !*s.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableWhenSetMsg))
		}
		if !reflect.DeepEqual(s.Data, oldS.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableWhenSetMsg))
		}
	}
	return append(errs, validateSecret(obj)...)
}

func validateNamespace(obj runtime.Object) field.ErrorList {
	ns := obj.(*corev1.Namespace)
	var errs field.ErrorList
	path := field.NewPath("spec", "finalizers")
	for _, f := range ns.Spec.Finalizers {
		errs = append(errs, apivalidation.ValidateFinalizerName(string(f), path)...)
		if err := kubeFinalizerNames([]string{string(f)}, path); len(err) > 0 {
			errs = append(errs, field.Invalid(path, string(f), err[0].Detail))
		}
	}
	return errs
}

func validateNamespaceUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateNamespace(obj)
}

func validatePodTemplate(obj runtime.Object) field.ErrorList {
	return validatePodTemplateSpec(&obj.(*corev1.PodTemplate).Template, field.NewPath("template"))
}

func validatePodTemplateUpdate(obj, _ runtime.Object) field.ErrorList {
	return validatePodTemplate(obj)
}

func validateReplicationController(obj runtime.Object) field.ErrorList {
	spec := &obj.(*corev1.ReplicationController).Spec
	fldPath := specPath
	errs := apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))
	if labels.Set(spec.Selector).AsSelector().Empty() {
		errs = append(errs, field.Required(fldPath.Child("selector"), ""))
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(derefInt32(spec.Replicas)), fldPath.Child("replicas")).WithOrigin("minimum")...)
	t, tPath := spec.Template, fldPath.Child("template")
	if t == nil {
		return append(errs, field.Required(tPath, ""))
	}
	if sel := labels.Set(spec.Selector).AsSelector(); !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(tPath.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, validatePodTemplateSpec(t, tPath)...)
	return append(errs, validateControllerTemplateSpec(&t.Spec, tPath.Child("spec"), "ReplicationController")...)
}

func validateReplicationControllerUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateReplicationController(obj)
}

// validateControllerTemplateSpec applies the rules every replicating
// controller puts on its pods: restart Always, no active deadline.
func validateControllerTemplateSpec(spec *corev1.PodSpec, path *field.Path, kind string) field.ErrorList {
	var errs field.ErrorList
	if spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(path.Child("restartPolicy"), spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(path.Child("activeDeadlineSeconds"), fmt.Sprintf("activeDeadlineSeconds in %s is not Supported", kind)))
	}
	return errs
}

var supportedAccessModes = sets.New(corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)

func validatePVC(obj runtime.Object) field.ErrorList {
	return validatePVCSpec(&obj.(*corev1.PersistentVolumeClaim).Spec, specPath)
}

func validatePVCSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.AccessModes) == 0 {
		errs = append(errs, field.Required(fldPath.Child("accessModes"), "at least 1 access mode is required"))
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	rwop, other := false, false
	for _, mode := range spec.AccessModes {
		if !supportedAccessModes.Has(mode) {
			errs = append(errs, field.NotSupported(fldPath.Child("accessModes"), mode, sets.List(supportedAccessModes)))
		}
		rwop = rwop || mode == corev1.ReadWriteOncePod
		other = other || (mode != corev1.ReadWriteOncePod && supportedAccessModes.Has(mode))
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(fldPath.Child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
	}
	storagePath := fldPath.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(storagePath, ""))
	} else if q.Cmp(resource.Quantity{}) <= 0 {
		errs = append(errs, field.Invalid(storagePath, q.String(), isNotPositiveErrorMsg))
	}
	if c := spec.StorageClassName; c != nil && *c != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*c, false) {
			errs = append(errs, field.Invalid(fldPath.Child("storageClassName"), *c, msg))
		}
	}
	if m := spec.VolumeMode; m != nil && *m != corev1.PersistentVolumeBlock && *m != corev1.PersistentVolumeFilesystem {
		errs = append(errs, field.NotSupported(fldPath.Child("volumeMode"), *m, []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}))
	}
	return errs
}

// validatePVCUpdate keeps the claim spec immutable except for volumeName
// (set once) and, for bound claims, the storage request and the volume
// attributes class.
func validatePVCUpdate(obj, old runtime.Object) field.ErrorList {
	pvc, oldPVC := obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim)
	errs := validatePVC(obj)
	newSpec, oldSpec := pvc.Spec.DeepCopy(), oldPVC.Spec.DeepCopy()
	if oldSpec.VolumeName == "" {
		oldSpec.VolumeName = newSpec.VolumeName
	}
	errs = append(errs, pvcClassUpgrade(pvc, oldPVC, newSpec, oldSpec)...)
	if pvc.Status.Phase == corev1.ClaimBound {
		if newSpec.Resources.Requests != nil {
			newSpec.Resources.Requests[corev1.ResourceStorage] = oldPVC.Spec.Resources.Requests[corev1.ResourceStorage]
		}
		newSpec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
	}
	if !apiequality.Semantic.DeepEqual(newSpec, oldSpec) {
		errs = append(errs, field.Forbidden(specPath, "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"+specDiff(oldSpec, newSpec)))
	}
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], oldPVC.Spec.Resources.Requests[corev1.ResourceStorage]
	statusSize := oldPVC.Status.Capacity[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) < 0 && newSize.Cmp(statusSize) <= 0 {
		errs = append(errs, field.Forbidden(specPath.Child("resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	errs = append(errs, apivalidation.ValidateImmutableField(pvc.Spec.VolumeMode, oldPVC.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	return append(errs, keepAppliedVolumeAttributesClass(pvc, oldPVC)...)
}

// keepAppliedVolumeAttributesClass: once a volume attributes class has been
// applied (status.currentVolumeAttributesClassName), the claim's may change
// but not go away.
func keepAppliedVolumeAttributesClass(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	name, p := pvc.Spec.VolumeAttributesClassName, specPath.Child("volumeAttributesClassName")
	if old.Status.CurrentVolumeAttributesClassName == nil || apiequality.Semantic.DeepEqual(old.Spec.VolumeAttributesClassName, name) {
		return nil
	}
	switch {
	case name == nil:
		return field.ErrorList{field.Forbidden(p, "update to nil is forbidden when status.currentVolumeAttributesClassName is not nil")}
	case *name == "":
		return field.ErrorList{field.Forbidden(p, "update to empty string is forbidden when status.currentVolumeAttributesClassName is not nil")}
	}
	return nil
}

// pvcClassUpgrade lets a claim without storageClassName get one (as the
// persistent volume binder gives the default class): the one its beta
// storage-class annotation names, when it has that annotation, which
// may then be dropped; any, when it has not. Otherwise the beta
// annotation is immutable. It makes newSpec's class oldSpec's when the
// change is allowed.
func pvcClassUpgrade(pvc, oldPVC *corev1.PersistentVolumeClaim, newSpec, oldSpec *corev1.PersistentVolumeClaimSpec) field.ErrorList {
	oldAnn, oldHas := oldPVC.Annotations[corev1.BetaStorageClassAnnotation]
	newAnn, newHas := pvc.Annotations[corev1.BetaStorageClassAnnotation]
	newClass := pvc.Spec.StorageClassName
	if oldHas && oldPVC.Spec.StorageClassName == nil && newClass != nil && *newClass == oldAnn && (!newHas || newAnn == oldAnn) {
		newSpec.StorageClassName = nil
		return nil
	}
	var errs field.ErrorList
	if newAnn != oldAnn {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations", corev1.BetaStorageClassAnnotation), newAnn, fieldImmutable))
	}
	if newClass != nil && oldPVC.Spec.StorageClassName == nil && (!oldHas || *newClass == oldAnn) {
		newSpec.StorageClassName = oldSpec.StorageClassName
	}
	return errs
}

func derefInt32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return sets.List(sets.New(keys...))
}
