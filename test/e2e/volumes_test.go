package e2e

import (
	"strings"
	"testing"
)

const volumeObjects = `apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-1}
spec:
  attacher: disk.csi.example.com
  nodeName: node-1
  source: {persistentVolumeName: pv-1}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata: {name: gold}
driverName: disk.csi.example.com
parameters: {iops: "3000"}
`

const badVolumeObjects = `apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-bad}
spec:
  nodeName: ""
  source: {}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata: {name: bad-class}
driverName: ""
`

// TestKubectlVolumeKinds: kubectl creates, lists and changes
// VolumeAttachments and VolumeAttributesClasses and sees what
// kube-apiserver 1.37.2 showed for the same commands (recorded side by
// side with the real server): discovery (vac), columns, the class's
// protection finalizer, errors of invalid objects (the attacher's
// declarative error last) and of changes, and a status write.
func TestKubectlVolumeKinds(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	resources := a.MustKubectl(t, "", "api-resources", "-o", "wide", "--api-group=storage.k8s.io")
	verbs := "create,delete,deletecollection,get,list,patch,update,watch"
	for _, want := range [][]string{
		{"volumeattachments", "storage.k8s.io/v1", "false", "VolumeAttachment", verbs},
		{"volumeattributesclasses", "vac", "storage.k8s.io/v1", "false", "VolumeAttributesClass", verbs},
	} {
		if !hasLine(resources, want) {
			t.Errorf("kubectl api-resources: no line %q in\n%s", want, resources)
		}
	}
	a.MustKubectl(t, volumeObjects, "apply", "-f", "-")
	out := a.MustKubectl(t, "", "get", "volumeattachments,volumeattributesclasses")
	for _, want := range [][]string{
		{"NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"},
		{"volumeattachment.storage.k8s.io/va-1", "disk.csi.example.com", "pv-1", "node-1", "false"},
		{"NAME", "DRIVERNAME", "AGE"},
		{"volumeattributesclass.storage.k8s.io/gold", "disk.csi.example.com"},
	} {
		if !hasLine(out, want) {
			t.Errorf("kubectl get volumeattachments,volumeattributesclasses: no line %q in\n%s", want, out)
		}
	}
	if got := a.MustKubectl(t, "", "get", "vac", "gold", "-o", "jsonpath={.metadata.finalizers}"); got != `["kubernetes.io/vac-protection"]` {
		t.Errorf("class finalizers = %s, want the vac-protection finalizer", got)
	}
	_, errOut, err := a.Kubectl(t, badVolumeObjects, "create", "-f", "-")
	for _, want := range []string{
		`VolumeAttachment.storage.k8s.io "va-bad" is invalid: [spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName, spec.nodeName: Invalid value: "": ` +
			dnsSubdomainMsg + `, spec.attacher: Required value]`,
		`VolumeAttributesClass.storage.k8s.io "bad-class" is invalid: [driverName: Required value, parameters: Required value: must contain at least one key/value pair]`,
	} {
		if err == nil || !strings.Contains(errOut, want) {
			t.Errorf("kubectl create of invalid objects: %v, stderr\n%s\nwant\n%s", err, errOut, want)
		}
	}
	for _, tc := range []struct{ args, want string }{
		{`volumeattributesclass gold {"parameters":{"iops":"4000"}}`, `The VolumeAttributesClass "gold" is invalid: parameters: Forbidden: updates to parameters are forbidden.`},
		{`volumeattachment va-1 {"spec":{"nodeName":"node-2"}}`, `The VolumeAttachment "va-1" is invalid: spec: Invalid value: null: field is immutable`},
	} {
		f := strings.Fields(tc.args)
		_, errOut, err := a.Kubectl(t, "", "patch", f[0], f[1], "--type=merge", "-p", f[2])
		if err == nil || strings.TrimSpace(errOut) != tc.want {
			t.Errorf("kubectl patch %s: %v, stderr %q, want %q", f[0], err, errOut, tc.want)
		}
	}
	a.MustKubectl(t, "", "patch", "volumeattachment", "va-1", "--subresource=status", "--type=merge", "-p", `{"status":{"attached":true}}`)
	if out := a.MustKubectl(t, "", "get", "volumeattachments"); !hasLine(out, []string{"va-1", "disk.csi.example.com", "pv-1", "node-1", "true"}) {
		t.Errorf("kubectl get volumeattachments after the status write:\n%s\nwant ATTACHED true", out)
	}
}
