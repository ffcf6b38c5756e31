package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestKubectlDRAKinds: kubectl applies, lists, reads and deletes the
// resource.k8s.io kinds and sees what kube-apiserver 1.37.2 showed for the
// same objects (testdata/dra, its output recorded from the real server):
// the lowercase-driver warning, each kind's columns, discovery without
// short names, the v1 defaults and generations, an invalid class's errors
// (the name's declarative error after the selector's), a DeviceTaintRule's
// delete answered with a Status and its update without resourceVersion
// refused, a new effect restarting the taint's time.
func TestKubectlDRAKinds(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	objects, err := os.ReadFile("testdata/dra/objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, err := a.Kubectl(t, string(objects), "apply", "-f", "-")
	warning := `Warning: spec.driver: driver names should be lowercase; "GPU.example.com" contains uppercase characters`
	if err != nil || strings.TrimSpace(errOut) != warning {
		t.Fatalf("kubectl apply: %v, stderr %q; want the lowercase driver warning", err, errOut)
	}
	out := a.MustKubectl(t, "", "get", "deviceclasses,resourceslices,devicetaintrules,resourceclaims,resourceclaimtemplates", "-n", "default")
	for _, want := range [][]string{
		{"NAME", "AGE"},
		{"deviceclass.resource.k8s.io/gpu.e2e.example.com"},
		{"NAME", "NODE", "DRIVER", "POOL", "AGE"},
		{"resourceslice.resource.k8s.io/e2e-node-1-gpu", "node-1", "GPU.example.com", "node-1"},
		{"NAME", "KEY", "VALUE", "EFFECT", "TIMEADDED", "AGE"},
		{"devicetaintrule.resource.k8s.io/e2e-rule", "example.com/broken", "true", "NoExecute"},
		{"NAME", "STATE", "AGE"},
		{"resourceclaim.resource.k8s.io/e2e-claim", "pending"},
		{"resourceclaimtemplate.resource.k8s.io/e2e-template"},
	} {
		if !hasLine(out, want) {
			t.Errorf("kubectl get: no line starting with %q in\n%s", want, out)
		}
	}
	resources := a.MustKubectl(t, "", "api-resources", "--api-group=resource.k8s.io")
	want := `NAME                     SHORTNAMES   APIVERSION           NAMESPACED   KIND
deviceclasses                         resource.k8s.io/v1   false        DeviceClass
devicetaintrules                      resource.k8s.io/v1   false        DeviceTaintRule
resourceclaims                        resource.k8s.io/v1   true         ResourceClaim
resourceclaimtemplates                resource.k8s.io/v1   true         ResourceClaimTemplate
resourceslices                        resource.k8s.io/v1   false        ResourceSlice`
	if strings.TrimSpace(resources) != want {
		t.Errorf("kubectl api-resources --api-group=resource.k8s.io:\n%s\nwant\n%s", resources, want)
	}
	for _, c := range []struct{ args, want string }{
		{"resourceclaim e2e-claim -n default -o jsonpath={.spec.devices.requests[0].exactly.allocationMode},{.spec.devices.requests[0].exactly.count},{.status}", "ExactCount,1,{}"},
		{"resourceclaimtemplate e2e-template -n default -o jsonpath={.spec.spec.devices.requests[0].firstAvailable[1].count}", "1"},
		{"deviceclass gpu.e2e.example.com -o jsonpath={.metadata.generation}", "1"},
	} {
		if got := a.MustKubectl(t, "", append([]string{"get"}, strings.Fields(c.args)...)...); got != c.want {
			t.Errorf("kubectl get %s = %q, want %q", c.args, got, c.want)
		}
	}
	if got := a.MustKubectl(t, "", "get", "resourceslice", "e2e-node-1-gpu", "-o", "jsonpath={.metadata.generation},{.spec.devices[0].taints[0].timeAdded}"); !strings.HasPrefix(got, "1,20") {
		t.Errorf("slice generation and defaulted taint time = %q, want 1 and a time", got)
	}
	badClass(t, a)
	taintRuleWrites(t, a)
	for _, args := range [][]string{{"resourceslice", "e2e-node-1-gpu"}, {"resourceclaim", "e2e-claim", "-n", "default"}} {
		out := a.MustKubectl(t, "", append([]string{"delete"}, args...)...)
		if want := args[0] + `.resource.k8s.io "` + args[1] + `" deleted`; !strings.Contains(out, want) {
			t.Errorf("kubectl delete %s = %q, want %q", args[0], out, want)
		}
	}
}

func badClass(t *testing.T, a *admitd) {
	t.Helper()
	bad, err := os.ReadFile("testdata/dra/bad-class.yaml")
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := os.ReadFile("testdata/dra/bad-class.kube-apiserver.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, err := a.Kubectl(t, string(bad), "create", "-f", "-")
	if err == nil || strings.TrimSpace(errOut) != strings.TrimSpace(string(recorded)) {
		t.Errorf("kubectl create of an invalid DeviceClass: %v, stderr\n%s\nwant (kube-apiserver 1.37.2)\n%s", err, errOut, recorded)
	}
}

// taintRuleWrites: an update without resourceVersion is refused, a patch
// of the effect restarts the taint's time and counts a generation, and a
// delete answers with a Status.
func taintRuleWrites(t *testing.T, a *admitd) {
	t.Helper()
	rule := a.MustKubectl(t, "", "get", "devicetaintrule", "e2e-rule", "-o", "json")
	var obj map[string]any
	if err := json.Unmarshal([]byte(rule), &obj); err != nil {
		t.Fatal(err)
	}
	delete(obj["metadata"].(map[string]any), "resourceVersion")
	body, _ := json.Marshal(obj)
	_, errOut, err := a.Kubectl(t, string(body), "replace", "--raw", "/apis/resource.k8s.io/v1/devicetaintrules/e2e-rule", "-f", "-")
	want := `The devicetaintrules "e2e-rule" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`
	if err == nil || strings.TrimSpace(errOut) != want {
		t.Errorf("replacing a DeviceTaintRule without resourceVersion: %v, stderr %q, want %q", err, errOut, want)
	}
	a.MustKubectl(t, "", "patch", "devicetaintrule", "e2e-rule", "--type=merge", "-p", `{"spec":{"taint":{"effect":"None"}}}`)
	if got := a.MustKubectl(t, "", "get", "devicetaintrule", "e2e-rule", "-o", "jsonpath={.metadata.generation},{.spec.taint.timeAdded}"); !strings.HasPrefix(got, "2,20") || strings.HasSuffix(got, "2026-01-01T00:00:00Z") {
		t.Errorf("rule after an effect change = %q, want generation 2 and a new timeAdded", got)
	}
	status := a.MustKubectl(t, "", "delete", "--raw", "/apis/resource.k8s.io/v1/devicetaintrules/e2e-rule")
	if !strings.HasPrefix(status, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"e2e-rule","group":"resource.k8s.io","kind":"devicetaintrules","uid":`) {
		t.Errorf("deleting a DeviceTaintRule answered %s, want a Success Status", status)
	}
	deleted := a.MustKubectl(t, "", "delete", "--raw", "/apis/resource.k8s.io/v1/deviceclasses/gpu.e2e.example.com")
	if !strings.HasPrefix(deleted, `{"kind":"DeviceClass","apiVersion":"resource.k8s.io/v1"`) {
		t.Errorf("deleting a DeviceClass answered %s, want the class", deleted)
	}
}
