package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// quotaPod is a pod requesting cpu.
func quotaPod(name, cpu string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: quota
spec:
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources:
      requests:
        cpu: %s
`, name, cpu)
}

// ResourceQuota with kubectl on the built binary, the quota controller on:
// creates over the quota are refused with upstream's message, and
// `kubectl describe quota` shows the usage after creates and after
// deletes.
func TestQuotaWithKubectl(t *testing.T) {
	a := startAdmitd(t, t.TempDir(), "--quota-controller")
	a.mustKubectl(t, "", "create", "namespace", "quota")
	a.waitFor(t, "the default service account and root CA", "get", "serviceaccount/default", "configmap/kube-root-ca.crt", "-n", "quota")
	a.mustKubectl(t, "", "create", "quota", "q", "-n", "quota", "--hard=configmaps=3,requests.cpu=1,pods=10")
	a.describeQuota(t, `configmaps\s+1\s+3`, `requests\.cpu\s+0\s+1`, `pods\s+0\s+10`)

	a.mustKubectl(t, "", "create", "configmap", "a", "-n", "quota")
	a.mustKubectl(t, "", "create", "configmap", "b", "-n", "quota")
	a.wantRefused(t, "", `configmaps "c" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=3, limited: configmaps=3`,
		"create", "configmap", "c", "-n", "quota")

	a.mustKubectl(t, quotaPod("p1", "400m"), "create", "-f", "-")
	a.mustKubectl(t, quotaPod("p2", "400m"), "create", "-f", "-")
	a.wantRefused(t, quotaPod("p3", "400m"), `pods "p3" is forbidden: exceeded quota: q, requested: requests.cpu=400m, used: requests.cpu=800m, limited: requests.cpu=1`,
		"create", "-f", "-")
	noRequests := strings.Replace(quotaPod("p4", "1"), "    resources:\n      requests:\n        cpu: 1\n", "", 1)
	a.wantRefused(t, noRequests, `pods "p4" is forbidden: failed quota: q: must specify requests.cpu for: c`, "create", "-f", "-")
	a.describeQuota(t, `configmaps\s+3\s+3`, `requests\.cpu\s+800m\s+1`, `pods\s+2\s+10`)

	a.mustKubectl(t, "", "delete", "pod", "p1", "-n", "quota", "--grace-period=0", "--force")
	a.mustKubectl(t, "", "delete", "configmap", "a", "-n", "quota")
	a.describeQuota(t, `configmaps\s+2\s+3`, `requests\.cpu\s+400m\s+1`, `pods\s+1\s+10`)
	a.mustKubectl(t, quotaPod("p3", "400m"), "create", "-f", "-")
	a.mustKubectl(t, "", "create", "configmap", "c", "-n", "quota")
	a.describeQuota(t, `configmaps\s+3\s+3`, `requests\.cpu\s+800m\s+1`, `pods\s+2\s+10`)
}

// waitFor retries `kubectl get args` for up to 10s until it succeeds.
func (a *admitd) waitFor(t *testing.T, what string, args ...string) {
	t.Helper()
	var errOut string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var err error
		if _, errOut, err = a.kubectl(t, "", args...); err == nil {
			return
		}
	}
	t.Fatalf("waiting for %s: %s", what, errOut)
}

// wantRefused runs kubectl and expects it to fail with want in its error.
func (a *admitd) wantRefused(t *testing.T, stdin, want string, args ...string) {
	t.Helper()
	out, errOut, err := a.kubectl(t, stdin, args...)
	if err == nil || !strings.Contains(errOut, want) {
		t.Fatalf("kubectl %s: err %v, stdout %q, stderr %q; want the error %q", strings.Join(args, " "), err, out, errOut, want)
	}
}

// describeQuota polls `kubectl describe quota q` for up to 10s until every
// line pattern matches.
func (a *admitd) describeQuota(t *testing.T, lines ...string) {
	t.Helper()
	var out string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out = a.mustKubectl(t, "", "describe", "quota", "q", "-n", "quota")
		all := true
		for _, l := range lines {
			all = all && regexp.MustCompile(`(?m)^`+l+`\s*$`).MatchString(out)
		}
		if all {
			return
		}
	}
	t.Fatalf("kubectl describe quota: want lines %q, got:\n%s", lines, out)
}
