package registry

import (
	"fmt"
	"path"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Pod volume validation (upstream ValidateVolumes / validateVolumeSource).
// Every source type is counted; the sources users reach for (emptyDir,
// hostPath, secret, configMap, persistentVolumeClaim, downwardAPI,
// projected, ephemeral, nfs, csi, image) are validated field by field.

const fileModeErrorMsg = "must be a number between 0 and 0777 (octal), both inclusive"

var validVolumeFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations", "metadata.uid")

func validateVolumes(volumes []corev1.Volume, podMeta *metav1.ObjectMeta, fldPath *field.Path) (map[string]corev1.VolumeSource, field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	vols := map[string]corev1.VolumeSource{}
	for i := range volumes {
		v, idxPath := &volumes[i], fldPath.Index(i)
		el := validateVolumeSource(&v.VolumeSource, idxPath, v.Name, podMeta)
		if v.Name == "" {
			el = append(el, field.Required(idxPath.Child("name"), ""))
		} else {
			el = append(el, dns1123Label(v.Name, idxPath.Child("name"))...)
		}
		if names.Has(v.Name) {
			el = append(el, field.Duplicate(idxPath.Child("name"), v.Name))
		}
		if len(el) == 0 {
			names.Insert(v.Name)
			vols[v.Name] = v.VolumeSource
		} else {
			errs = append(errs, el...)
		}
	}
	return vols, errs
}

// volumeSourceValidators validate the sources with field-level rules; keys
// are the json names of the VolumeSource fields.
var volumeSourceValidators = map[string]func(s *corev1.VolumeSource, p *field.Path) field.ErrorList{
	"emptyDir": func(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
		if l := s.EmptyDir.SizeLimit; l != nil && l.Cmp(resource.Quantity{}) < 0 {
			return field.ErrorList{field.Forbidden(p.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity")}
		}
		return nil
	},
	"hostPath": func(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
		if s.HostPath.Path == "" {
			return field.ErrorList{field.Required(p.Child("path"), "")}
		}
		return append(validateNoBacksteps(s.HostPath.Path, p.Child("path")), validateHostPathType(s.HostPath.Type, p.Child("type"))...)
	},
	"secret": func(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if s.Secret.SecretName == "" {
			errs = append(errs, field.Required(p.Child("secretName"), ""))
		}
		return append(errs, validateModeAndItems(s.Secret.DefaultMode, s.Secret.Items, p)...)
	},
	"configMap": func(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if s.ConfigMap.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		return append(errs, validateModeAndItems(s.ConfigMap.DefaultMode, s.ConfigMap.Items, p)...)
	},
	"persistentVolumeClaim": func(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
		if s.PersistentVolumeClaim.ClaimName == "" {
			return field.ErrorList{field.Required(p.Child("claimName"), "")}
		}
		return nil
	},
	"nfs": func(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if s.NFS.Server == "" {
			errs = append(errs, field.Required(p.Child("server"), ""))
		}
		if s.NFS.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
		if !path.IsAbs(s.NFS.Path) {
			errs = append(errs, field.Invalid(p.Child("path"), s.NFS.Path, "must be an absolute path"))
		}
		return errs
	},
	"downwardAPI": func(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
		errs := validateFileMode(s.DownwardAPI.DefaultMode, p.Child("defaultMode"))
		for _, f := range s.DownwardAPI.Items {
			errs = append(errs, validateDownwardAPIFile(&f, p)...)
		}
		return errs
	},
	"projected": func(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
		return append(validateFileMode(s.Projected.DefaultMode, p.Child("defaultMode")), validateProjectionSources(s.Projected, p)...)
	},
	"csi": func(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
		return validateCSIDriverName(s.CSI.Driver, p.Child("driver"))
	},
	"ephemeral": func(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
		if s.Ephemeral.VolumeClaimTemplate == nil {
			return field.ErrorList{field.Required(p.Child("volumeClaimTemplate"), "")}
		}
		return validatePVCSpec(&s.Ephemeral.VolumeClaimTemplate.Spec, p.Child("volumeClaimTemplate", "spec"))
	},
	"image": func(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if s.Image.Reference == "" {
			errs = append(errs, field.Required(p.Child("reference"), ""))
		}
		return append(errs, validatePullPolicy(s.Image.PullPolicy, p.Child("pullPolicy"))...)
	},
}

// volumeSourceOrder lists the VolumeSource fields in the order upstream
// checks them, with the path upstream reports "more than 1 volume type" on
// (its "downwarAPI" spelling included).
var volumeSourceOrder = []struct{ goName, jsonName, forbidName string }{
	{"EmptyDir", "emptyDir", "emptyDir"}, {"HostPath", "hostPath", "hostPath"}, {"GitRepo", "gitRepo", "gitRepo"},
	{"GCEPersistentDisk", "gcePersistentDisk", "gcePersistentDisk"}, {"AWSElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore"},
	{"Secret", "secret", "secret"}, {"NFS", "nfs", "nfs"}, {"ISCSI", "iscsi", "iscsi"}, {"Glusterfs", "glusterfs", "glusterfs"},
	{"Flocker", "flocker", "flocker"}, {"PersistentVolumeClaim", "persistentVolumeClaim", "persistentVolumeClaim"},
	{"RBD", "rbd", "rbd"}, {"Cinder", "cinder", "cinder"}, {"CephFS", "cephfs", "cephFS"}, {"Quobyte", "quobyte", "quobyte"},
	{"DownwardAPI", "downwardAPI", "downwarAPI"}, {"FC", "fc", "fc"}, {"FlexVolume", "flexVolume", "flexVolume"},
	{"ConfigMap", "configMap", "configMap"}, {"AzureFile", "azureFile", "azureFile"}, {"VsphereVolume", "vsphereVolume", "vsphereVolume"},
	{"PhotonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk"}, {"PortworxVolume", "portworxVolume", "portworxVolume"},
	{"AzureDisk", "azureDisk", "azureDisk"}, {"StorageOS", "storageos", "storageos"}, {"Projected", "projected", "projected"},
	{"ScaleIO", "scaleIO", "scaleIO"}, {"CSI", "csi", "csi"}, {"Ephemeral", "ephemeral", "ephemeral"}, {"Image", "image", "image"},
}

// validateVolumeSource requires exactly one source and validates it.
func validateVolumeSource(s *corev1.VolumeSource, fldPath *field.Path, volName string, podMeta *metav1.ObjectMeta) field.ErrorList {
	var errs field.ErrorList
	n := 0
	v := reflect.ValueOf(s).Elem()
	for _, src := range volumeSourceOrder {
		if v.FieldByName(src.goName).IsNil() {
			continue
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(fldPath.Child(src.forbidName), "may not specify more than 1 volume type"))
			continue
		}
		n++
		if validate, ok := volumeSourceValidators[src.jsonName]; ok {
			errs = append(errs, validate(s, fldPath.Child(src.jsonName))...)
		}
		if src.jsonName == "ephemeral" && podMeta != nil && podMeta.Name != "" && volName != "" {
			pvcName := podMeta.Name + "-" + volName
			for _, msg := range apivalidation.NameIsDNSSubdomain(pvcName, false) {
				errs = append(errs, field.Invalid(fldPath.Child("name"), volName, fmt.Sprintf("PVC name %q: %v", pvcName, msg)))
			}
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(fldPath, "must specify a volume type"))
	}
	return errs
}

var supportedHostPathTypes = sets.New(corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
	corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev)

func validateHostPathType(t *corev1.HostPathType, p *field.Path) field.ErrorList {
	if t != nil && !supportedHostPathTypes.Has(*t) {
		return field.ErrorList{field.NotSupported(p, t, sets.List(supportedHostPathTypes))}
	}
	return nil
}

func validateFileMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0777 || *mode < 0) {
		return field.ErrorList{field.Invalid(p, *mode, fileModeErrorMsg)}
	}
	return nil
}

func validateModeAndItems(mode *int32, items []corev1.KeyToPath, p *field.Path) field.ErrorList {
	errs := validateFileMode(mode, p.Child("defaultMode"))
	for i := range items {
		errs = append(errs, validateKeyToPath(&items[i], p.Child("items").Index(i))...)
	}
	return errs
}

func validateKeyToPath(kp *corev1.KeyToPath, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if kp.Key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	}
	if kp.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateLocalNonReservedPath(kp.Path, p.Child("path"))...)
	return append(errs, validateFileMode(kp.Mode, p.Child("mode"))...)
}

func validateDownwardAPIFile(f *corev1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateLocalNonReservedPath(f.Path, p.Child("path"))...)
	switch {
	case f.FieldRef != nil:
		errs = append(errs, validateFieldSelector(f.FieldRef, validVolumeFieldPaths, p.Child("fieldRef"))...)
		if f.ResourceFieldRef != nil {
			errs = append(errs, field.Invalid(p, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case f.ResourceFieldRef != nil:
		if f.ResourceFieldRef.ContainerName == "" {
			errs = append(errs, field.Required(p.Child("resourceFieldRef", "containerName"), ""))
		}
	default:
		errs = append(errs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
	}
	return append(errs, validateFileMode(f.Mode, p.Child("mode"))...)
}

func validateProjectionSources(proj *corev1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	addPath := func(cur string, value any) {
		if cur == "" {
			return
		}
		if paths.Has(cur) {
			errs = append(errs, field.Invalid(p, value, "conflicting duplicate paths"))
		}
		paths.Insert(cur)
	}
	for i, src := range proj.Sources {
		srcPath, n := p.Child("sources").Index(i), 0
		if s := src.Secret; s != nil {
			n++
			if s.Name == "" {
				errs = append(errs, field.Required(srcPath.Child("secret", "name"), ""))
			}
			for j := range s.Items {
				errs = append(errs, validateKeyToPath(&s.Items[j], srcPath.Child("secret", "items").Index(j))...)
				addPath(s.Items[j].Path, s.Name)
			}
		}
		if c := src.ConfigMap; c != nil {
			n++
			if c.Name == "" {
				errs = append(errs, field.Required(srcPath.Child("configMap", "name"), ""))
			}
			for j := range c.Items {
				errs = append(errs, validateKeyToPath(&c.Items[j], srcPath.Child("configMap", "items").Index(j))...)
				addPath(c.Items[j].Path, c.Name)
			}
		}
		if d := src.DownwardAPI; d != nil {
			n++
			for j := range d.Items {
				errs = append(errs, validateDownwardAPIFile(&d.Items[j], srcPath.Child("downwardAPI"))...)
				addPath(d.Items[j].Path, d.Items[j].Path)
			}
		}
		if t := src.ServiceAccountToken; t != nil {
			n++
			errs = append(errs, validateTokenProjection(t, srcPath.Child("serviceAccountToken"), p)...)
		}
		if src.ClusterTrustBundle != nil || src.PodCertificate != nil {
			n++
		}
		if n > 1 {
			errs = append(errs, field.Forbidden(srcPath, "may not specify more than 1 volume type per source"))
		}
	}
	return errs
}

func validateTokenProjection(t *corev1.ServiceAccountTokenProjection, tokenPath, projPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.ExpirationSeconds != nil {
		if *t.ExpirationSeconds < 10*60 {
			errs = append(errs, field.Invalid(tokenPath.Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
		}
		if *t.ExpirationSeconds > 1<<32 {
			errs = append(errs, field.Invalid(tokenPath.Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	if t.Path == "" {
		return append(errs, field.Required(projPath.Child("path"), ""))
	}
	return append(errs, validateLocalNonReservedPath(t.Path, projPath.Child("path"))...)
}

// validateCSIDriverName: a driver name is required, at most 63 characters,
// and a DNS subdomain but for upper-case letters (the name is reported as
// written).
func validateCSIDriverName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if len(name) > 63 {
		errs = append(errs, field.TooLong(p, "", 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}
