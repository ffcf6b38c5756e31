package registry

import (
	"net"
	"path"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The volume sources of a PersistentVolume, as upstream's
// ValidatePersistentVolumeSpec checks them (pkg/apis/core/validation): one
// entry per source in upstream's order, with the path upstream refuses a
// second source on and the path it validates the source under (they
// differ for gcePersistentDisk and cephfs).

type pvSource struct {
	set func(s *corev1.PersistentVolumeSource) bool
	// forbidName is the child upstream reports "may not specify more than 1
	// volume type" on; "" for flexVolume, which upstream never refuses as a
	// second source.
	forbidName, name string
	validate         func(s *corev1.PersistentVolumeSource, pvName string, p *field.Path) field.ErrorList
}

var pvSources = []pvSource{
	{func(s *corev1.PersistentVolumeSource) bool { return s.HostPath != nil }, "hostPath", "hostPath",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return validateHostPathSource(s.HostPath, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.GCEPersistentDisk != nil }, "gcePersistentDisk", "persistentDisk",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return validatePartitionedDisk("pdName", s.GCEPersistentDisk.PDName, s.GCEPersistentDisk.Partition, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.AWSElasticBlockStore != nil }, "awsElasticBlockStore", "awsElasticBlockStore",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return validatePartitionedDisk("volumeID", s.AWSElasticBlockStore.VolumeID, s.AWSElasticBlockStore.Partition, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.Glusterfs != nil }, "glusterfs", "glusterfs",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return validateGlusterfsPV(s.Glusterfs, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.Flocker != nil }, "flocker", "flocker",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return validateFlockerSource(s.Flocker, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.NFS != nil }, "nfs", "nfs",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return volumeSourceValidators["nfs"](&corev1.VolumeSource{NFS: s.NFS}, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.RBD != nil }, "rbd", "rbd",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			errs := requiredString(len(s.RBD.CephMonitors) == 0, p.Child("monitors"))
			return append(errs, requiredString(s.RBD.RBDImage == "", p.Child("image"))...)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.Quobyte != nil }, "quobyte", "quobyte",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return validateQuobyteSource(s.Quobyte, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.CephFS != nil }, "cephFS", "cephfs",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return requiredString(len(s.CephFS.Monitors) == 0, p.Child("monitors"))
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.ISCSI != nil }, "iscsi", "iscsi",
		func(s *corev1.PersistentVolumeSource, pvName string, p *field.Path) field.ErrorList {
			return validateISCSIPV(s.ISCSI, pvName, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.Cinder != nil }, "cinder", "cinder",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			errs := requiredString(s.Cinder.VolumeID == "", p.Child("volumeID"))
			return append(errs, validateNamespacedSecretRef(s.Cinder.SecretRef, p)...)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.FC != nil }, "fc", "fc",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return validateFCSource(s.FC, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.FlexVolume != nil }, "", "flexVolume",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return validateFlexSource(s.FlexVolume.Driver, s.FlexVolume.Options, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.AzureFile != nil }, "azureFile", "azureFile",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			a := s.AzureFile
			errs := requiredString(a.SecretName == "", p.Child("secretName"))
			errs = append(errs, requiredString(a.ShareName == "", p.Child("shareName"))...)
			return append(errs, requiredString(a.SecretNamespace != nil && *a.SecretNamespace == "", p.Child("secretNamespace"))...)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.VsphereVolume != nil }, "vsphereVolume", "vsphereVolume",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return requiredString(s.VsphereVolume.VolumePath == "", p.Child("volumePath"))
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.PhotonPersistentDisk != nil }, "photonPersistentDisk", "photonPersistentDisk",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return requiredString(s.PhotonPersistentDisk.PdID == "", p.Child("pdID"))
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.PortworxVolume != nil }, "portworxVolume", "portworxVolume",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return requiredString(s.PortworxVolume.VolumeID == "", p.Child("volumeID"))
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.AzureDisk != nil }, "azureDisk", "azureDisk",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return validateAzureDiskSource(s.AzureDisk, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.ScaleIO != nil }, "scaleIO", "scaleIO",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			sio := s.ScaleIO
			errs := requiredString(sio.Gateway == "", p.Child("gateway"))
			errs = append(errs, requiredString(sio.System == "", p.Child("system"))...)
			return append(errs, requiredString(sio.VolumeName == "", p.Child("volumeName"))...)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.Local != nil }, "local", "local",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			if s.Local.Path == "" {
				return field.ErrorList{field.Required(p.Child("path"), "")}
			}
			return validateNoBacksteps(s.Local.Path, p.Child("path"))
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.StorageOS != nil }, "storageos", "storageos",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return validateStorageOSPV(s.StorageOS, p)
		}},
	{func(s *corev1.PersistentVolumeSource) bool { return s.CSI != nil }, "csi", "csi",
		func(s *corev1.PersistentVolumeSource, _ string, p *field.Path) field.ErrorList {
			return validateCSIPVSource(s.CSI, p)
		}},
}

// requiredString is a Required error at p when missing.
func requiredString(missing bool, p *field.Path) field.ErrorList {
	if missing {
		return field.ErrorList{field.Required(p, "")}
	}
	return nil
}

func validateHostPathSource(h *corev1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	if h.Path == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	return append(validateNoBacksteps(h.Path, p.Child("path")), validateHostPathType(h.Type, p.Child("type"))...)
}

// pdPartitionErrorMsg is upstream's message for a partition out of range:
// it says 1 to 255 though 0 is accepted.
var pdPartitionErrorMsg = validation.InclusiveRangeError(1, 255)

// validatePartitionedDisk: a GCE or AWS disk needs its id (under idName)
// and a partition from 0 to 255.
func validatePartitionedDisk(idName, id string, partition int32, p *field.Path) field.ErrorList {
	errs := requiredString(id == "", p.Child(idName))
	if partition < 0 || partition > 255 {
		errs = append(errs, field.Invalid(p.Child("partition"), partition, pdPartitionErrorMsg))
	}
	return errs
}

func validateGlusterfsPV(g *corev1.GlusterfsPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := requiredString(g.EndpointsName == "", p.Child("endpoints"))
	errs = append(errs, requiredString(g.Path == "", p.Child("path"))...)
	if ns := g.EndpointsNamespace; ns != nil {
		np := p.Child("endpointsNamespace")
		if *ns == "" {
			return append(errs, field.Invalid(np, *ns, "if the endpointnamespace is set, it must be a valid namespace name"))
		}
		for _, msg := range apivalidation.ValidateNamespaceName(*ns, false) {
			errs = append(errs, field.Invalid(np, *ns, msg))
		}
	}
	return errs
}

func validateFlockerSource(f *corev1.FlockerVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.DatasetName == "" && f.DatasetUUID == "" {
		errs = append(errs, field.Required(p, "one of datasetName and datasetUUID is required"))
	}
	if f.DatasetName != "" && f.DatasetUUID != "" {
		errs = append(errs, field.Invalid(p, "resource", "datasetName and datasetUUID can not be specified simultaneously"))
	}
	if strings.Contains(f.DatasetName, "/") {
		errs = append(errs, field.Invalid(p.Child("datasetName"), f.DatasetName, "must not contain '/'"))
	}
	return errs
}

const quobyteRegistryMsg = "must be a host:port pair or multiple pairs separated by commas"

func validateQuobyteSource(q *corev1.QuobyteVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case q.Registry == "":
		errs = append(errs, field.Required(p.Child("registry"), quobyteRegistryMsg))
	case len(q.Tenant) >= 65:
		errs = append(errs, field.Required(p.Child("tenant"), "must be a UUID and may not exceed a length of 64 characters"))
	default:
		for _, pair := range strings.Split(q.Registry, ",") {
			if _, _, err := net.SplitHostPort(pair); err != nil {
				errs = append(errs, field.Invalid(p.Child("registry"), q.Registry, quobyteRegistryMsg))
			}
		}
	}
	return append(errs, requiredString(q.Volume == "", p.Child("volume"))...)
}

var (
	iscsiIQNPattern = lazyRegexp(`iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$`)
	iscsiEUIPattern = lazyRegexp(`^eui.[[:alnum:]]{16}$`)
	iscsiNAAPattern = lazyRegexp(`^naa.[[:alnum:]]{32}$`)
)

// iscsiNameMalformed says whether an iqn, eui or naa name does not match
// its pattern; known says whether it has one of the three prefixes.
func iscsiNameMalformed(name string) (known, malformed bool) {
	for prefix, re := range map[string]func() *regexp.Regexp{"iqn": iscsiIQNPattern, "eui": iscsiEUIPattern, "naa": iscsiNAAPattern} {
		if strings.HasPrefix(name, prefix) {
			return true, !re().MatchString(name)
		}
	}
	return false, false
}

func validateISCSIPV(s *corev1.ISCSIPersistentVolumeSource, pvName string, p *field.Path) field.ErrorList {
	const badFormat = "must be valid format"
	errs := requiredString(s.TargetPortal == "", p.Child("targetPortal"))
	if s.InitiatorName != nil && len(pvName+":"+s.TargetPortal) > 64 {
		errs = append(errs, field.Invalid(p.Child("targetportal"), s.TargetPortal,
			"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
	}
	if s.IQN == "" {
		errs = append(errs, field.Required(p.Child("iqn"), ""))
	} else if known, malformed := iscsiNameMalformed(s.IQN); !known || malformed {
		errs = append(errs, field.Invalid(p.Child("iqn"), s.IQN, badFormat))
	}
	if s.Lun < 0 || s.Lun > 255 {
		errs = append(errs, field.Invalid(p.Child("lun"), s.Lun, validation.InclusiveRangeError(0, 255)))
	}
	if (s.DiscoveryCHAPAuth || s.SessionCHAPAuth) && s.SecretRef == nil {
		errs = append(errs, field.Required(p.Child("secretRef"), ""))
	}
	if s.SecretRef != nil && s.SecretRef.Name == "" {
		errs = append(errs, field.Required(p.Child("secretRef", "name"), ""))
	}
	if s.InitiatorName != nil {
		// Upstream checks the prefix and the pattern apart: a name with
		// neither prefix gets one error, a malformed one the other.
		if known, malformed := iscsiNameMalformed(*s.InitiatorName); !known || malformed {
			errs = append(errs, field.Invalid(p.Child("initiatorname"), *s.InitiatorName, badFormat))
		}
	}
	return errs
}

// validateNamespacedSecretRef: a secret reference, when set, names a
// secret and its namespace (Cinder's and StorageOS's).
func validateNamespacedSecretRef(ref *corev1.SecretReference, p *field.Path) field.ErrorList {
	if ref == nil {
		return nil
	}
	errs := requiredString(ref.Name == "", p.Child("secretRef", "name"))
	return append(errs, requiredString(ref.Namespace == "", p.Child("secretRef", "namespace"))...)
}

func validateFCSource(fc *corev1.FCVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(fc.TargetWWNs) < 1 && len(fc.WWIDs) < 1 {
		errs = append(errs, field.Required(p.Child("targetWWNs"), "must specify either targetWWNs or wwids, but not both"))
	}
	if len(fc.TargetWWNs) != 0 && len(fc.WWIDs) != 0 {
		errs = append(errs, field.Invalid(p.Child("targetWWNs"), fc.TargetWWNs, "targetWWNs and wwids can not be specified simultaneously"))
	}
	if len(fc.TargetWWNs) != 0 {
		if fc.Lun == nil {
			errs = append(errs, field.Required(p.Child("lun"), "lun is required if targetWWNs is specified"))
		} else if *fc.Lun < 0 || *fc.Lun > 255 {
			errs = append(errs, field.Invalid(p.Child("lun"), fc.Lun, validation.InclusiveRangeError(0, 255)))
		}
	}
	return errs
}

// validateFlexSource: a driver is required and no option key is in the
// kubernetes.io or k8s.io namespaces (errors in map order, as upstream).
func validateFlexSource(driver string, options map[string]string, p *field.Path) field.ErrorList {
	errs := requiredString(driver == "", p.Child("driver"))
	for k := range options {
		namespace := k
		if before, _, found := strings.Cut(k, "/"); found {
			namespace = before
		}
		normalized := "." + strings.ToLower(namespace)
		if strings.HasSuffix(normalized, ".kubernetes.io") || strings.HasSuffix(normalized, ".k8s.io") {
			errs = append(errs, field.Invalid(p.Child("options").Key(k), k, "kubernetes.io and k8s.io namespaces are reserved"))
		}
	}
	return errs
}

var (
	azureCachingModes = sets.New(corev1.AzureDataDiskCachingNone, corev1.AzureDataDiskCachingReadOnly, corev1.AzureDataDiskCachingReadWrite)
	azureDiskKinds    = sets.New(corev1.AzureSharedBlobDisk, corev1.AzureDedicatedBlobDisk, corev1.AzureManagedDisk)
)

func validateAzureDiskSource(a *corev1.AzureDiskVolumeSource, p *field.Path) field.ErrorList {
	errs := requiredString(a.DiskName == "", p.Child("diskName"))
	errs = append(errs, requiredString(a.DataDiskURI == "", p.Child("diskURI"))...)
	if a.CachingMode != nil && !azureCachingModes.Has(*a.CachingMode) {
		errs = append(errs, field.NotSupported(p.Child("cachingMode"), *a.CachingMode, sets.List(azureCachingModes)))
	}
	if a.Kind != nil && !azureDiskKinds.Has(*a.Kind) {
		errs = append(errs, field.NotSupported(p.Child("kind"), *a.Kind, sets.List(azureDiskKinds)))
	}
	if a.Kind != nil && *a.Kind == corev1.AzureManagedDisk && !strings.HasPrefix(a.DataDiskURI, "/subscriptions/") {
		errs = append(errs, field.NotSupported(p.Child("diskURI"), a.DataDiskURI,
			[]string{"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"}))
	}
	if a.Kind != nil && *a.Kind != corev1.AzureManagedDisk && !strings.HasPrefix(a.DataDiskURI, "https://") {
		errs = append(errs, field.NotSupported(p.Child("diskURI"), a.DataDiskURI,
			[]string{"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"}))
	}
	return errs
}

func validateStorageOSPV(s *corev1.StorageOSPersistentVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.VolumeName == "" {
		errs = append(errs, field.Required(p.Child("volumeName"), ""))
	} else {
		errs = append(errs, dns1123Label(s.VolumeName, p.Child("volumeName"))...)
	}
	if s.VolumeNamespace != "" {
		errs = append(errs, dns1123Label(s.VolumeNamespace, p.Child("volumeNamespace"))...)
	}
	if s.SecretRef != nil {
		errs = append(errs, requiredString(s.SecretRef.Name == "", p.Child("secretRef", "name"))...)
		errs = append(errs, requiredString(s.SecretRef.Namespace == "", p.Child("secretRef", "namespace"))...)
	}
	return errs
}

func validateCSIPVSource(c *corev1.CSIPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := validateCSIDriverName(c.Driver, p.Child("driver"))
	errs = append(errs, requiredString(c.VolumeHandle == "", p.Child("volumeHandle"))...)
	for _, ref := range []struct {
		name string
		ref  *corev1.SecretReference
	}{{"controllerPublishSecretRef", c.ControllerPublishSecretRef}, {"controllerExpandSecretRef", c.ControllerExpandSecretRef},
		{"nodePublishSecretRef", c.NodePublishSecretRef}, {"nodeExpandSecretRef", c.NodeExpandSecretRef}} {
		if ref.ref != nil {
			errs = append(errs, validatePVSecretRef(ref.ref, p.Child(ref.name))...)
		}
	}
	return errs
}

// validatePVSecretRef: a CSI secret reference names a secret (a DNS
// subdomain) and its namespace (a DNS label).
func validatePVSecretRef(ref *corev1.SecretReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, dns1123Subdomain(ref.Name, p.Child("name"))...)
	}
	if ref.Namespace == "" {
		return append(errs, field.Required(p.Child("namespace"), ""))
	}
	return append(errs, dns1123Label(ref.Namespace, p.Child("namespace"))...)
}

// hostPathIsRoot says whether a hostPath source mounts "/".
func hostPathIsRoot(s *corev1.PersistentVolumeSource) bool {
	return s.HostPath != nil && path.Clean(s.HostPath.Path) == "/"
}
