package registry

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func hostPathPV(name string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}}}
}

func withPVSpec(pv *corev1.PersistentVolume, change func(s *corev1.PersistentVolumeSpec)) *corev1.PersistentVolume {
	change(&pv.Spec)
	return pv
}

// The messages are upstream's (test/upstream/pvvalidation compares every
// error with kube-apiserver's strategy).
func TestValidatePersistentVolume(t *testing.T) {
	for _, tc := range []struct {
		name string
		pv   *corev1.PersistentVolume
		want string
	}{
		{"valid", hostPathPV("pv-1"), ""},
		{"empty spec", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}}, `[spec.accessModes: Required value, spec.capacity: Required value, spec.capacity: Unsupported value: null: supported values: "storage", spec: Required value: must specify a volume type]`},
		{"bad iscsi", withPVSpec(hostPathPV("pv-1"), func(s *corev1.PersistentVolumeSpec) {
			s.PersistentVolumeSource = corev1.PersistentVolumeSource{ISCSI: &corev1.ISCSIPersistentVolumeSource{TargetPortal: "127.0.0.1:3260",
				IQN: "bad", Lun: 300, InitiatorName: ptr.To("eui.short"), SessionCHAPAuth: true}}
		}), `[spec.iscsi.iqn: Invalid value: "bad": must be valid format, spec.iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive, spec.iscsi.secretRef: Required value, spec.iscsi.initiatorname: Invalid value: "eui.short": must be valid format]`},
		{"two sources", withPVSpec(hostPathPV("pv-1"), func(s *corev1.PersistentVolumeSpec) {
			s.NFS = &corev1.NFSVolumeSource{Server: "nfs", Path: "relative"}
		}), "spec.nfs: Forbidden: may not specify more than 1 volume type"},
		{"flexVolume is never a second source", withPVSpec(hostPathPV("pv-1"), func(s *corev1.PersistentVolumeSpec) {
			s.FlexVolume = &corev1.FlexPersistentVolumeSource{Options: map[string]string{"kubernetes.io/x": "y"}}
		}), `[spec.flexVolume.driver: Required value, spec.flexVolume.options[kubernetes.io/x]: Invalid value: "kubernetes.io/x": kubernetes.io and k8s.io namespaces are reserved]`},
		{"local without node affinity", withPVSpec(hostPathPV("pv-1"), func(s *corev1.PersistentVolumeSpec) {
			s.PersistentVolumeSource = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/a/../b"}}
		}), `[spec.local.path: Invalid value: "/a/../b": must not contain '..', spec.nodeAffinity: Required value: Local volume requires node affinity]`},
		{"gce partition", withPVSpec(hostPathPV("pv-1"), func(s *corev1.PersistentVolumeSpec) {
			s.PersistentVolumeSource = corev1.PersistentVolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{Partition: 256}}
		}), "[spec.persistentDisk.pdName: Required value, spec.persistentDisk.partition: Invalid value: 256: must be between 1 and 255, inclusive]"},
		{"csi", withPVSpec(hostPathPV("pv-1"), func(s *corev1.PersistentVolumeSpec) {
			s.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "Bad_Driver",
				NodePublishSecretRef: &corev1.SecretReference{Name: "s"}}}
			s.VolumeAttributesClassName = ptr.To("")
		}), `[spec.csi.driver: Invalid value: "Bad_Driver": ` + dnsSubdomainMsg + `, spec.csi.volumeHandle: Required value, spec.csi.nodePublishSecretRef.namespace: Required value, spec.volumeAttributesClassName: Required value: an empty string is disallowed]`},
		{"recycle the root", withPVSpec(hostPathPV("pv-1"), func(s *corev1.PersistentVolumeSpec) {
			s.HostPath.Path = "/tmp/.."
			s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRecycle
			s.StorageClassName = "Fast_Class"
			s.VolumeAttributesClassName = ptr.To("gold")
		}), `[spec.hostPath.path: Invalid value: "/tmp/..": must not contain '..', spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/', spec.storageClassName: Invalid value: "Fast_Class": ` + dnsSubdomainMsg + `, spec.csi: Required value: has to be specified when using volumeAttributesClassName]`},
		{"node affinity", withPVSpec(hostPathPV("pv-1"), func(s *corev1.PersistentVolumeSpec) {
			s.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"-bad-"}}}}}}}
		}), `spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "-bad-": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.pv)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// storedPV is pv as created.
func storedPV(t *testing.T, pv *corev1.PersistentVolume) *corev1.PersistentVolume {
	t.Helper()
	if errs := createErrors(t, pv); len(errs) > 0 {
		t.Fatalf("create: %v", errs)
	}
	return pv
}

func TestValidatePersistentVolumeUpdate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(s *corev1.PersistentVolumeSpec)
		want   string
	}{
		{"claim bound", func(s *corev1.PersistentVolumeSpec) {
			s.ClaimRef = &corev1.ObjectReference{Name: "c", Namespace: "default"}
		}, ""},
		{"source changed", func(s *corev1.PersistentVolumeSpec) { s.HostPath.Path = "/other" }, "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n@@ -2,7 +2,7 @@\n  \"GCEPersistentDisk\": null,\n  \"AWSElasticBlockStore\": null,\n  \"HostPath\": {\n-  \"Path\": \"/data\",\n+  \"Path\": \"/other\",\n   \"Type\": \"\"\n  },\n  \"Glusterfs\": null,\n"},
		{"volume mode changed", func(s *corev1.PersistentVolumeSpec) { s.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) }, `volumeMode: Invalid value: "Block": field is immutable`},
		{"node affinity moved to the GA zone label", func(s *corev1.PersistentVolumeSpec) {
			s.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Key = corev1.LabelTopologyZone
		}, ""},
		{"node affinity changed", func(s *corev1.PersistentVolumeSpec) {
			s.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{"b"}
		}, `nodeAffinity: Invalid value: {"Required":{"NodeSelectorTerms":[{"MatchExpressions":[{"Key":"failure-domain.beta.kubernetes.io/zone","Operator":"In","Values":["b"]}],"MatchFields":null}]}}: field is immutable, except for updating from beta label to GA`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := storedPV(t, withPVSpec(hostPathPV("pv-1"), func(s *corev1.PersistentVolumeSpec) {
				s.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelFailureDomainBetaZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}
			}))
			pv := old.DeepCopy()
			tc.change(&pv.Spec)
			if got := aggregate(updateErrors(t, pv, old)); got != tc.want {
				t.Errorf("update errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestPersistentVolumeStatusWrite(t *testing.T) {
	old := storedPV(t, hostPathPV("pv-1"))
	created := old.Status.LastPhaseTransitionTime
	if old.Status.Phase != corev1.VolumePending || created == nil {
		t.Fatalf("created status = %+v, want Pending with a transition time", old.Status)
	}
	long := metav1.NewTime(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC))
	old.Status.LastPhaseTransitionTime = &long
	r := resourceFor(t, old)
	pv := old.DeepCopy()
	pv.Spec.HostPath.Path = "/ignored"
	pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}
	got := PrepareForUpdate(r, "status", pv, old).(*corev1.PersistentVolume)
	if got.Spec.HostPath.Path != "/data" || got.Status.LastPhaseTransitionTime == nil || got.Status.LastPhaseTransitionTime.Equal(&long) {
		t.Errorf("status write = %+v, want the stored spec and a new transition time", got)
	}
	if errs := r.ValidateSubresourceChange("status", got, old); len(errs) > 0 {
		t.Errorf("status write errors = %v, want none", errs)
	}
	same := old.DeepCopy()
	same.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, Message: "m"}
	if got := PrepareForUpdate(r, "status", same, old).(*corev1.PersistentVolume); !got.Status.LastPhaseTransitionTime.Equal(&long) {
		t.Errorf("same phase: transition time = %v, want the stored %v", got.Status.LastPhaseTransitionTime, long)
	}
	same.ResourceVersion = ""
	if got := aggregate(r.ValidateSubresourceChange("status", same, old)); !strings.Contains(got, "resourceVersion: Required value") {
		t.Errorf("status write without resourceVersion: errors = %s, want resourceVersion required", got)
	}
}

func TestPersistentVolumeWarnings(t *testing.T) {
	pv := withPVSpec(hostPathPV("pv-1"), func(s *corev1.PersistentVolumeSpec) {
		s.PersistentVolumeSource = corev1.PersistentVolumeSource{CephFS: &corev1.CephFSPersistentVolumeSource{Monitors: []string{"m"}}}
		s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRecycle
		s.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "beta.kubernetes.io/os", Operator: corev1.NodeSelectorOpExists}}}}}}
	})
	pv.Annotations = map[string]string{"volume.beta.kubernetes.io/storage-class": "fast"}
	storedPV(t, pv)
	want := []string{
		`metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead`,
		"spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.",
		`spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key: beta.kubernetes.io/os is deprecated since v1.14; use "kubernetes.io/os" instead`,
		"spec.cephfs: deprecated in v1.28, non-functional in v1.31+",
	}
	if got := resourceFor(t, pv).Warnings(pv, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}

func TestVolumeAttachmentInlineSpec(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec corev1.PersistentVolumeSpec
		want string
	}{
		{"csi", corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}}, ""},
		{"not csi", hostPathPV("x").Spec, `[spec.source.inlineVolumeSpec.capacity: Forbidden: may not be specified in the context of inline volumes, spec.source.inlineVolumeSpec.csi: Required value: has to be specified in the context of inline volumes]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va-1"}, Spec: storagev1.VolumeAttachmentSpec{Attacher: "a", NodeName: "n",
				Source: storagev1.VolumeAttachmentSource{InlineVolumeSpec: &tc.spec}}}
			if got := aggregate(createErrors(t, va)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
