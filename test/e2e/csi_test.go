package e2e

import (
	"reflect"
	"strings"
	"testing"
)

const csiObjects = `apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: vault.csi.example.com}
spec:
  tokenRequests: [{audience: vault}]
  serviceAccountTokenInSecrets: true
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers:
  - {name: disk.csi.example.com, nodeID: i-1, topologyKeys: [topology.kubernetes.io/zone]}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-1, namespace: default}
storageClassName: fast
capacity: 10Gi
nodeTopology:
  matchLabels: {failure-domain.beta.kubernetes.io/zone: a}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zonal}
provisioner: disk.csi.example.com
allowedTopologies:
- matchLabelExpressions: [{key: failure-domain.beta.kubernetes.io/zone, values: [a]}]
`

const badCSIDriver = `apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: bad.csi.example.com}
spec:
  volumeLifecycleModes: [x, x, Persistent]
  fsGroupPolicy: nope
  nodeAllocatableUpdatePeriodSeconds: 5
`

// TestKubectlCSIKinds: kubectl creates, lists, describes and deletes the
// storage.k8s.io CSI kinds and sees what kube-apiserver 1.37.2 shows (its
// output recorded from the real server): the CSIStorageCapacity warning,
// the CSIDriver and CSINode columns, the default columns of
// CSIStorageCapacity, the discovery of the group and a refused CSIDriver's
// errors, each once.
func TestKubectlCSIKinds(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	_, errOut, err := a.Kubectl(t, csiObjects, "apply", "-f", "-")
	warning := `Warning: nodeTopology.matchLabels.failure-domain.beta.kubernetes.io/zone: deprecated since v1.17; use "topology.kubernetes.io/zone" instead`
	classWarning := `Warning: allowedTopologies[0].matchLabelExpressions[0].key: deprecated since v1.17; use "topology.kubernetes.io/zone" instead`
	if err != nil || !strings.Contains(errOut, warning) || !strings.Contains(errOut, classWarning) {
		t.Fatalf("kubectl apply: %v, stderr %q; want the deprecated label warnings of the CSIStorageCapacity and the StorageClass", err, errOut)
	}
	out := a.MustKubectl(t, "", "get", "csidrivers,csinodes,csistoragecapacities", "-n", "default")
	for _, want := range [][]string{
		{"NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS", "REQUIRESREPUBLISH", "MODES", "AGE"},
		{"csidriver.storage.k8s.io/vault.csi.example.com", "true", "false", "false", "vault", "false", "Persistent"},
		{"NAME", "DRIVERS", "AGE"},
		{"csinode.storage.k8s.io/n1", "1"},
		{"NAME", "STORAGECLASSNAME", "CAPACITY"},
		{"csistoragecapacity.storage.k8s.io/cap-1", "fast", "10Gi"},
	} {
		if !hasLine(out, want) {
			t.Errorf("kubectl get csidrivers,csinodes,csistoragecapacities: no line starting with %q in\n%s", want, out)
		}
	}
	resources := a.MustKubectl(t, "", "api-resources", "--api-group=storage.k8s.io")
	for _, want := range [][]string{
		{"csidrivers", "storage.k8s.io/v1", "false", "CSIDriver"},
		{"csinodes", "storage.k8s.io/v1", "false", "CSINode"},
		{"csistoragecapacities", "storage.k8s.io/v1", "true", "CSIStorageCapacity"},
	} {
		if !hasLine(resources, want) {
			t.Errorf("kubectl api-resources: no line %q in\n%s", want, resources)
		}
	}
	spec := a.MustKubectl(t, "", "get", "csidriver", "vault.csi.example.com", "-o",
		"jsonpath={.spec.attachRequired},{.spec.fsGroupPolicy},{.spec.seLinuxMount},{.spec.preventPodSchedulingIfMissing},{.metadata.generation}")
	if spec != "true,ReadWriteOnceWithFSType,false,false," {
		t.Errorf("defaulted CSIDriver = %q, want true,ReadWriteOnceWithFSType,false,false, and no generation", spec)
	}
	_, errOut, err = a.Kubectl(t, badCSIDriver, "create", "-f", "-")
	want := `The CSIDriver "bad.csi.example.com" is invalid: 
* spec.fsGroupPolicy: Unsupported value: "nope": supported values: "File", "None", "ReadWriteOnceWithFSType"
* spec.volumeLifecycleModes: Unsupported value: "x": supported values: "Persistent", "Ephemeral"
* spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: must be greater than or equal to 10 seconds`
	if err == nil || strings.TrimSpace(errOut) != want {
		t.Errorf("kubectl create of an invalid CSIDriver: %v, stderr\n%s\nwant\n%s", err, errOut, want)
	}
	if out := a.MustKubectl(t, "", "describe", "csidriver", "vault.csi.example.com"); !strings.Contains(out, "vault") {
		t.Errorf("kubectl describe csidriver: %s, want the token request's audience", out)
	}
	for _, args := range [][]string{{"csinode", "n1"}, {"csistoragecapacity", "cap-1", "-n", "default"}} {
		out := a.MustKubectl(t, "", append([]string{"delete"}, args...)...)
		if want := args[0] + `.storage.k8s.io "` + args[1] + `" deleted`; !strings.Contains(out, want) {
			t.Errorf("kubectl delete %s = %q, want %q", args[0], out, want)
		}
	}
}

// hasLine reports whether a line of out starts with the fields want.
func hasLine(out string, want []string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(want) && reflect.DeepEqual(f[:len(want)], want) {
			return true
		}
	}
	return false
}
