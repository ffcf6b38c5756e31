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
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--quota-controller")
	a.MustKubectl(t, "", "create", "namespace", "quota")
	a.WaitFor(t, "the default service account and root CA", "get", "serviceaccount/default", "configmap/kube-root-ca.crt", "-n", "quota")
	a.MustKubectl(t, "", "create", "quota", "q", "-n", "quota", "--hard=configmaps=3,requests.cpu=1,pods=10")
	describeQuota(t, a, `configmaps\s+1\s+3`, `requests\.cpu\s+0\s+1`, `pods\s+0\s+10`)

	a.MustKubectl(t, "", "create", "configmap", "a", "-n", "quota")
	a.MustKubectl(t, "", "create", "configmap", "b", "-n", "quota")
	a.WantRefused(t, "", `configmaps "c" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=3, limited: configmaps=3`,
		"create", "configmap", "c", "-n", "quota")

	a.MustKubectl(t, quotaPod("p1", "400m"), "create", "-f", "-")
	a.MustKubectl(t, quotaPod("p2", "400m"), "create", "-f", "-")
	a.WantRefused(t, quotaPod("p3", "400m"), `pods "p3" is forbidden: exceeded quota: q, requested: requests.cpu=400m, used: requests.cpu=800m, limited: requests.cpu=1`,
		"create", "-f", "-")
	noRequests := strings.Replace(quotaPod("p4", "1"), "    resources:\n      requests:\n        cpu: 1\n", "", 1)
	a.WantRefused(t, noRequests, `pods "p4" is forbidden: failed quota: q: must specify requests.cpu for: c`, "create", "-f", "-")
	describeQuota(t, a, `configmaps\s+3\s+3`, `requests\.cpu\s+800m\s+1`, `pods\s+2\s+10`)

	a.MustKubectl(t, "", "delete", "pod", "p1", "-n", "quota", "--grace-period=0", "--force")
	a.MustKubectl(t, "", "delete", "configmap", "a", "-n", "quota")
	describeQuota(t, a, `configmaps\s+2\s+3`, `requests\.cpu\s+400m\s+1`, `pods\s+1\s+10`)
	a.MustKubectl(t, quotaPod("p3", "400m"), "create", "-f", "-")
	a.MustKubectl(t, "", "create", "configmap", "c", "-n", "quota")
	describeQuota(t, a, `configmaps\s+3\s+3`, `requests\.cpu\s+800m\s+1`, `pods\s+2\s+10`)
}

// describeQuota polls `kubectl describe quota q` for up to 10s until every
// line pattern matches.
func describeQuota(t *testing.T, a *admitd, lines ...string) {
	t.Helper()
	var out string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out = a.MustKubectl(t, "", "describe", "quota", "q", "-n", "quota")
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
