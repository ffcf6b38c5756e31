package e2e

import (
	"slices"
	"strings"
	"testing"
)

// kasLocalAPIServices are the rows `kubectl get apiservices` printed for
// kube-apiserver 1.37.2 with default flags (NAME SERVICE AVAILABLE).
var kasLocalAPIServices = []string{
	"v1.", "v1.admissionregistration.k8s.io", "v1.apiextensions.k8s.io", "v1.apps", "v1.authentication.k8s.io",
	"v1.authorization.k8s.io", "v1.autoscaling", "v1.batch", "v1.certificates.k8s.io", "v1.coordination.k8s.io",
	"v1.discovery.k8s.io", "v1.events.k8s.io", "v1.flowcontrol.apiserver.k8s.io", "v1.networking.k8s.io", "v1.node.k8s.io",
	"v1.policy", "v1.rbac.authorization.k8s.io", "v1.resource.k8s.io", "v1.scheduling.k8s.io", "v1.storage.k8s.io",
	"v1.storagemigration.k8s.io", "v2.autoscaling",
}

const badAPIServices = `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.wrong}
spec: {group: wardle.example.com, version: v1, groupPriorityMinimum: 0, versionPriority: 1001, caBundle: "YWJj", insecureSkipTLSVerify: true}
`

// TestKubectlAPIServices: kubectl sees the APIService resource and the
// Local APIServices as it does on kube-apiserver 1.37.2 (rows recorded side
// by side: every group/version kube-apiserver serves, all served here too,
// but apiregistration.k8s.io's own, Local, True), a remote APIService's
// defaulted port and ServiceNotFound condition, and an invalid one's errors
// as recorded.
func TestKubectlAPIServices(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	resources := a.MustKubectl(t, "", "api-resources", "-o", "wide", "--api-group=apiregistration.k8s.io")
	if want := []string{"apiservices", "apiregistration.k8s.io/v1", "false", "APIService",
		"create,delete,deletecollection,get,list,patch,update,watch", "api-extensions"}; !hasLine(resources, want) {
		t.Errorf("kubectl api-resources: no line %q in\n%s", want, resources)
	}
	served := strings.Fields(a.MustKubectl(t, "", "api-versions"))
	for _, name := range kasLocalAPIServices {
		version, group, _ := strings.Cut(name, ".")
		if gv := strings.TrimPrefix(group+"/"+version, "/"); !slices.Contains(served, gv) {
			t.Errorf("kubectl api-versions does not list %s, which kube-apiserver serves", gv)
		}
	}
	out := a.MustKubectl(t, "", "get", "apiservices")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := strings.Fields(lines[0]); !slices.Equal(got, []string{"NAME", "SERVICE", "AVAILABLE", "AGE"}) {
		t.Errorf("kubectl get apiservices header = %q", got)
	}
	var names []string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		names = append(names, f[0])
		if f[1] != "Local" || f[2] != "True" {
			t.Errorf("kubectl get apiservices: row %q, want Local True", l)
		}
	}
	if !slices.Equal(names, kasLocalAPIServices) {
		t.Errorf("kubectl get apiservices names =\n%q\nwant (kube-apiserver's)\n%q", names, kasLocalAPIServices)
	}

	a.MustKubectl(t, `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1alpha1.wardle.example.com"},
"spec":{"group":"wardle.example.com","version":"v1alpha1","groupPriorityMinimum":1000,"versionPriority":15,"service":{"name":"api","namespace":"wardle"},"insecureSkipTLSVerify":true}}`,
		"apply", "-f", "-")
	if got := a.MustKubectl(t, "", "get", "apiservice", "v1alpha1.wardle.example.com", "-o", "jsonpath={.spec.service.port}"); got != "443" {
		t.Errorf("service port = %q, want the default 443", got)
	}
	// As kube-apiserver 1.37.2 showed it, a moment after the apply.
	want := []string{"v1alpha1.wardle.example.com", "wardle/api", "False", "(ServiceNotFound)"}
	waitFor(t, "the remote APIService is ServiceNotFound", func() bool {
		return hasLine(a.MustKubectl(t, "", "get", "apiservices"), want)
	})
	cond := a.MustKubectl(t, "", "get", "apiservice", "v1alpha1.wardle.example.com", "-o", "jsonpath={.status.conditions[0].message}")
	if cond != `service/api in "wardle" is not present` {
		t.Errorf("condition message = %q, want upstream's", cond)
	}
	_, errOut, err := a.Kubectl(t, "", "get", "--raw", "/apis/wardle.example.com/v1alpha1/flunders")
	if err == nil || !strings.Contains(errOut, "ServiceUnavailable") {
		t.Errorf("GET of an unavailable group/version: err=%v stderr=%q, want 503 service unavailable", err, errOut)
	}
	_, errOut, err = a.Kubectl(t, badAPIServices, "apply", "-f", "-")
	for _, want := range []string{
		`The APIService "v1.wrong" is invalid: `,
		"* metadata.name: Invalid value: \"v1.wrong\": must be `spec.version+\".\"+spec.group`: \"v1.wardle.example.com\"",
		"* spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
		"* spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
		`* spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle`,
		"* spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
	} {
		if err == nil || !strings.Contains(errOut, want) {
			t.Errorf("kubectl apply of an invalid APIService: err=%v, stderr does not contain %q:\n%s", err, want, errOut)
		}
	}
}
