package noderestriction

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const ns = "ns"

func objMeta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID(name + "-uid")}
}

func podOn(name, node string, volumes ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: objMeta(name, ns), Spec: corev1.PodSpec{NodeName: node, Volumes: volumes,
		Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
}

func projected(sources ...corev1.VolumeProjection) corev1.VolumeSource {
	return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}
}

func tokenSource(audience string) corev1.VolumeProjection {
	return corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: audience, Path: "t"}}
}

func claimVolume(name, claim string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

func pvc(name, volume string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: objMeta(name, ns), Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume}}
}

func pv(name string, src corev1.PersistentVolumeSource) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: objMeta(name, ""), Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: src}}
}

func driver(name string, audiences ...string) *storagev1.CSIDriver {
	d := &storagev1.CSIDriver{ObjectMeta: objMeta(name, "")}
	for _, a := range audiences {
		d.Spec.TokenRequests = append(d.Spec.TokenRequests, storagev1.TokenRequest{Audience: a})
	}
	return d
}

// newWorld: nodes n1 and n2 (n3 does not exist); pods on them whose
// volumes reach token audiences every way the plugin follows.
func newWorld() *world {
	managed := corev1.AzureManagedDisk
	shared := corev1.AzureSharedBlobDisk
	eph := corev1.Volume{Name: "eph", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}}}}
	audiencePod := podOn("p1", "n1",
		corev1.Volume{Name: "tok", VolumeSource: projected(tokenSource("projected"))},
		corev1.Volume{Name: "tok-empty", VolumeSource: projected(corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{}})},
		claimVolume("claim", "claim-csi"),
		corev1.Volume{Name: "inline", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "drv-b"}}},
		eph,
		corev1.Volume{Name: "gce", VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "d"}}},
		corev1.Volume{Name: "azure", VolumeSource: corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{DiskName: "d", DataDiskURI: "u", Kind: &managed}}},
		claimVolume("intree", "claim-intree"),
		claimVolume("gce-regional", "claim-gce-regional"),
		claimVolume("azurefile", "claim-azurefile"),
	)
	broken := podOn("p-broken", "n1",
		claimVolume("missing", "no-such-claim"),
		claimVolume("unbound", "claim-unbound"),
		corev1.Volume{Name: "nodriver", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "no-such-driver"}}},
		corev1.Volume{Name: "blob", VolumeSource: corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{DiskName: "d", DataDiskURI: "u", Kind: &shared}}},
		corev1.Volume{Name: "ebs", VolumeSource: corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://zone/bad"}}},
		corev1.Volume{Name: "ebs-ok", VolumeSource: corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://zone/vol-2"}}},
		claimVolume("gce-two-regions", "claim-gce-two-regions"),
		claimVolume("gce-bad-zone", "claim-gce-bad-zone"),
		claimVolume("azurefile-no-ns", "claim-azurefile-no-ns"),
		claimVolume("azurefile-empty-ns", "claim-azurefile-empty-ns"),
	)
	pcrPod := podOn("p-pcr", "n1", corev1.Volume{Name: "cert", VolumeSource: projected(corev1.VolumeProjection{
		PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/projected", KeyType: "ED25519"}})})
	pcrPod.Spec.ServiceAccountName = "sa1"
	mirror := podOn("p-mirror", "n1")
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	mirror.Spec.ServiceAccountName = "sa1"
	noSA := podOn("p-nosa", "n1")
	noSA.Spec.ServiceAccountName = "missing-sa"
	return &world{
		nodes: []*corev1.Node{{ObjectMeta: objMeta("n1", "")}, {ObjectMeta: objMeta("n2", "")}},
		pods:  []*corev1.Pod{audiencePod, broken, pcrPod, mirror, noSA, podOn("p2", "n2"), podOn("p-unbound", "")},
		sas:   []*corev1.ServiceAccount{{ObjectMeta: objMeta("sa1", ns)}},
		pvcs: []*corev1.PersistentVolumeClaim{pvc("claim-csi", "pv-csi"), pvc("p1-eph", "pv-ebs"), pvc("claim-intree", "pv-cinder"),
			pvc("claim-unbound", "no-such-pv"), pvc("claim-gce-regional", "pv-gce-regional"), pvc("claim-azurefile", "pv-azurefile"),
			pvc("claim-gce-two-regions", "pv-gce-two-regions"), pvc("claim-gce-bad-zone", "pv-gce-bad-zone"),
			pvc("claim-azurefile-no-ns", "pv-azurefile-no-ns"), pvc("claim-azurefile-empty-ns", "pv-azurefile-empty-ns")},
		pvs: []*corev1.PersistentVolume{
			pv("pv-csi", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "drv-a", VolumeHandle: "h"}}),
			pv("pv-ebs", corev1.PersistentVolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}),
			pv("pv-cinder", corev1.PersistentVolumeSource{Cinder: &corev1.CinderPersistentVolumeSource{VolumeID: "v"}}),
			gcePV("pv-gce-regional", corev1.LabelTopologyZone, "us-central1-a__us-central1-b"),
			gcePV("pv-gce-two-regions", corev1.LabelFailureDomainBetaZone, "us-central1-a__us-east1-b__europe-west1-c"),
			gcePV("pv-gce-bad-zone", corev1.LabelTopologyZone, "us-central1-a__"),
			azureFilePV("pv-azurefile", nil, &corev1.ObjectReference{Namespace: "ns"}),
			azureFilePV("pv-azurefile-no-ns", nil, nil),
			azureFilePV("pv-azurefile-empty-ns", ptr.To(""), &corev1.ObjectReference{Namespace: "ns"}),
		},
		drivers: []*storagev1.CSIDriver{driver("drv-a", "csi-a"), driver("drv-b", "csi-b", ""), driver("ebs.csi.aws.com", "ebs"),
			driver("pd.csi.storage.gke.io", "gce"), driver("disk.csi.azure.com", "azure"), driver("cinder.csi.openstack.org", "cinder"),
			driver("file.csi.azure.com", "azurefile")},
	}
}

func gcePV(name, zoneLabel, zones string) *corev1.PersistentVolume {
	p := pv(name, corev1.PersistentVolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "d"}})
	p.Labels = map[string]string{zoneLabel: zones}
	return p
}

func azureFilePV(name string, secretNamespace *string, claim *corev1.ObjectReference) *corev1.PersistentVolume {
	p := pv(name, corev1.PersistentVolumeSource{AzureFile: &corev1.AzureFilePersistentVolumeSource{SecretName: "s", ShareName: "sh", SecretNamespace: secretNamespace}})
	p.Spec.ClaimRef = claim
	return p
}
