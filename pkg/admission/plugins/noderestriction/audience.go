package noderestriction

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// podUsesAudience reports whether a volume of the pod projects a token for
// audience, or uses a CSI driver (inline, through an ephemeral or
// persistent claim, or as the migrated form of an in-tree volume) that
// requests tokens for it. Failures to follow a volume are returned together
// when no volume uses the audience.
func (r *request) podUsesAudience(pod *corev1.Pod, audience string) (bool, error) {
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(s corev1.VolumeProjection) bool {
			return s.ServiceAccountToken != nil && s.ServiceAccountToken.Audience == audience
		}) {
			return true, nil
		}
		driver, err := r.volumeDriver(pod, v)
		if err == nil && driver != "" {
			var ok bool
			if ok, err = r.driverRequestsAudience(driver, audience); ok {
				return true, nil
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return false, utilerrors.NewAggregate(errs)
}

// volumeDriver is the CSI driver behind a volume, or "".
func (r *request) volumeDriver(pod *corev1.Pod, v *corev1.Volume) (string, error) {
	switch {
	case v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil:
		return r.claimDriver(pod.Namespace, pod.Name+"-"+v.Name)
	case v.PersistentVolumeClaim != nil:
		return r.claimDriver(pod.Namespace, v.PersistentVolumeClaim.ClaimName)
	case v.CSI != nil:
		return v.CSI.Driver, nil
	}
	return inTreeInlineDriver(&v.VolumeSource)
}

// claimDriver follows a claim to its volume's CSI driver.
func (r *request) claimDriver(namespace, claim string) (string, error) {
	pvc, err := get[*corev1.PersistentVolumeClaim](r, pvcGetter, namespace, claim)
	if err != nil {
		return "", err
	}
	pv, err := get[*corev1.PersistentVolume](r, pvGetter, "", pvc.Spec.VolumeName)
	if err != nil {
		return "", err
	}
	if pv.Spec.CSI != nil {
		return pv.Spec.CSI.Driver, nil
	}
	return inTreePVDriver(pv)
}

// driverRequestsAudience reports whether the CSIDriver requests tokens for
// audience.
func (r *request) driverRequestsAudience(driver, audience string) (bool, error) {
	d, err := get[*storagev1.CSIDriver](r, csiDriverGetter, "", driver)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(d.Spec.TokenRequests, func(t storagev1.TokenRequest) bool { return t.Audience == audience }), nil
}

// The CSI drivers in-tree volumes migrate to.
const (
	gcePDDriver     = "pd.csi.storage.gke.io"
	awsEBSDriver    = "ebs.csi.aws.com"
	cinderDriver    = "cinder.csi.openstack.org"
	azureDiskDriver = "disk.csi.azure.com"
	azureFileDriver = "file.csi.azure.com"
	vsphereDriver   = "csi.vsphere.vmware.com"
	portworxDriver  = "pxd.portworx.com"
)

// inTreeInlineDriver is the CSI driver an inline in-tree volume migrates
// to, or "" for a volume that does not migrate.
func inTreeInlineDriver(v *corev1.VolumeSource) (string, error) {
	switch {
	case v.GCEPersistentDisk != nil:
		return gcePDDriver, nil
	case v.AWSElasticBlockStore != nil:
		return awsEBSDriverFor(v.AWSElasticBlockStore)
	case v.Cinder != nil:
		return cinderDriver, nil
	case v.AzureDisk != nil:
		return azureDiskDriverFor(v.AzureDisk)
	case v.AzureFile != nil:
		return azureFileDriver, nil
	case v.VsphereVolume != nil:
		return vsphereDriver, nil
	case v.PortworxVolume != nil:
		return portworxDriver, nil
	}
	return "", nil
}

// inTreePVDriver is inTreeInlineDriver for a persistent volume, which
// also fails where translating the volume to CSI fails.
func inTreePVDriver(pv *corev1.PersistentVolume) (string, error) {
	s := &pv.Spec.PersistentVolumeSource
	switch {
	case s.GCEPersistentDisk != nil:
		return gcePDDriverFor(pv)
	case s.AWSElasticBlockStore != nil:
		return awsEBSDriverFor(s.AWSElasticBlockStore)
	case s.Cinder != nil:
		return cinderDriver, nil
	case s.AzureDisk != nil:
		return azureDiskDriverFor(s.AzureDisk)
	case s.AzureFile != nil:
		return azureFilePVDriverFor(pv)
	case s.VsphereVolume != nil:
		return vsphereDriver, nil
	case s.PortworxVolume != nil:
		return portworxDriver, nil
	}
	return "", nil
}

// gcePDDriverFor: a GCE disk whose zone label names several zones
// migrates only when they are zones of one region.
func gcePDDriverFor(pv *corev1.PersistentVolume) (string, error) {
	label := pv.Labels[corev1.LabelFailureDomainBetaZone]
	if label == "" {
		label = pv.Labels[corev1.LabelTopologyZone]
	}
	zones := strings.Split(label, "__")
	if len(zones) < 2 {
		return gcePDDriver, nil
	}
	regions := map[string]struct{}{}
	for _, z := range zones {
		parts := strings.Split(z, "-")
		if len(parts) != 3 {
			return "", fmt.Errorf("failed to get region from zones: zone in unexpected format, expected: {locale}-{region}-{zone}, got: %v", z)
		}
		regions[parts[0]+"-"+parts[1]] = struct{}{}
	}
	if len(regions) != 1 {
		return "", fmt.Errorf("failed to get region from zones: multiple or no regions gotten from zones, got: %v", regions)
	}
	return gcePDDriver, nil
}

// azureFilePVDriverFor: an Azure File volume migrates when the namespace
// of its secret is known.
func azureFilePVDriverFor(pv *corev1.PersistentVolume) (string, error) {
	ns := ""
	if n := pv.Spec.AzureFile.SecretNamespace; n != nil {
		ns = *n
	} else if pv.Spec.ClaimRef != nil {
		ns = pv.Spec.ClaimRef.Namespace
	}
	if ns == "" {
		return "", errors.New("could not find a secret namespace in PersistentVolumeSource or ClaimRef")
	}
	return azureFileDriver, nil
}

// azureDiskDriverFor: only managed Azure disks migrate.
func azureDiskDriverFor(d *corev1.AzureDiskVolumeSource) (string, error) {
	if d.Kind != nil && !strings.EqualFold(string(*d.Kind), string(corev1.AzureManagedDisk)) {
		return "", fmt.Errorf("kind(%v) is not supported in csi migration", *d.Kind)
	}
	return azureDiskDriver, nil
}

var awsVolumeID = regexp.MustCompile("^vol-[^/]*$")

// awsEBSDriverFor: an EBS volume migrates when its ID is a bare volume ID
// or an aws:// URL whose path is one.
func awsEBSDriverFor(d *corev1.AWSElasticBlockStoreVolumeSource) (string, error) {
	id := d.VolumeID
	if !strings.HasPrefix(id, "aws://") {
		return awsEBSDriver, nil
	}
	u, err := url.Parse(id)
	if err != nil {
		err = fmt.Errorf("Invalid disk name (%s): %v", id, err) //nolint:staticcheck // upstream's words
	} else if !awsVolumeID.MatchString(strings.Trim(u.Path, "/")) {
		err = fmt.Errorf("Invalid format for AWS volume (%s)", id) //nolint:staticcheck // upstream's words
	}
	if err != nil {
		return "", fmt.Errorf("failed to translate Kubernetes ID to EBS Volume ID %v", err)
	}
	return awsEBSDriver, nil
}
