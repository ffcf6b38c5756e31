package e2e

import (
	"strings"
	"testing"
)

// The manifests and what kube-apiserver 1.37.2 printed for them, recorded
// side by side with the real server.

const badISCSIVolume = `apiVersion: v1
kind: PersistentVolume
metadata: {name: bad-iscsi}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  iscsi: {targetPortal: "127.0.0.1:3260", iqn: bad, lun: 300, initiatorName: eui.short, chapAuthSession: true}
`

const recycledVolume = `apiVersion: v1
kind: PersistentVolume
metadata:
  name: good
  annotations: {volume.beta.kubernetes.io/storage-class: fast}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Recycle
  hostPath: {path: /data}
`

const hostPathInlineAttachment = `apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-inline}
spec:
  attacher: a
  nodeName: node-1
  source:
    inlineVolumeSpec:
      capacity: {storage: 1Gi}
      accessModes: [ReadWriteOnce]
      hostPath: {path: /data}
`

func TestKubectlPersistentVolumeValidation(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	for _, tc := range []struct {
		name, manifest string
		args           []string
		wantErr        string
	}{
		{"invalid iSCSI volume", badISCSIVolume, []string{"create", "-f", "-"}, `The PersistentVolume "bad-iscsi" is invalid: 
* spec.iscsi.iqn: Invalid value: "bad": must be valid format
* spec.iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive
* spec.iscsi.secretRef: Required value
* spec.iscsi.initiatorname: Invalid value: "eui.short": must be valid format
`},
		{"recycled volume", recycledVolume, []string{"create", "-f", "-"},
			`Warning: metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead
Warning: spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.
`},
		{"source changed", "", []string{"patch", "pv", "good", "--type=merge", "-p", `{"spec":{"hostPath":{"path":"/other"}}}`},
			`The PersistentVolume "good" is invalid: spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation
@@ -2,7 +2,7 @@
  "GCEPersistentDisk": null,
  "AWSElasticBlockStore": null,
  "HostPath": {
-  "Path": "/data",
+  "Path": "/other",
   "Type": ""
  },
  "Glusterfs": null,

`},
		{"inline spec not CSI", hostPathInlineAttachment, []string{"create", "-f", "-"}, `The VolumeAttachment "va-inline" is invalid: 
* spec.source.inlineVolumeSpec.capacity: Forbidden: may not be specified in the context of inline volumes
* spec.source.inlineVolumeSpec.csi: Required value: has to be specified in the context of inline volumes
`},
	} {
		_, errOut, _ := a.Kubectl(t, tc.manifest, tc.args...)
		if errOut != tc.wantErr {
			t.Errorf("%s: kubectl %s printed\n%s\nwant\n%s", tc.name, strings.Join(tc.args, " "), errOut, tc.wantErr)
		}
	}
	out, errOut, err := a.Kubectl(t, "", "patch", "pv", "good", "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Bound"}}`,
		"-o", "jsonpath={.status.phase} {.spec.hostPath.path}")
	if err != nil || out != "Bound /data" {
		t.Errorf("status write: %q, %v: %s, want %q", out, err, errOut, "Bound /data")
	}
}
