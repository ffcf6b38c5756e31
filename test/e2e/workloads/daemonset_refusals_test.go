package workloads

import (
	"github.com/admitd/admitd/test/e2e/harness"

	"strings"
	"testing"
)

const daemonSetRefusalsFile = "testdata/daemonset/kcm-1.37.2-refusals.txt"

// As on kube-apiserver + kube-controller-manager 1.37.2 (recorded in
// testdata/daemonset): in a namespace enforcing the restricted Pod
// Security level, a DaemonSet gets no pod and FailedCreate events with
// PodSecurity's refusal (its creates go through admission as its service
// account); elsewhere, a daemon pod that fails is deleted with a
// FailedDaemonPod event and replaced.
func TestDaemonSetRefusalsMatchKCM(t *testing.T) {
	t.Parallel()
	s := startDaemonSetSession(t, "locked", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	var got []string
	if _, errOut, err := s.a.Kubectl(t, agentDaemonSet, "-n", s.ns, "create", "-f", "-"); err != nil {
		t.Fatal(errOut)
	}
	got = append(got, s.settle("refused by PodSecurity"), s.events())

	s.createNamespace("failing", nil)
	s.ns = "failing"
	if _, errOut, err := s.a.Kubectl(t, agentDaemonSet, "-n", s.ns, "create", "-f", "-"); err != nil {
		t.Fatal(errOut)
	}
	got = append(got, s.settle("running"))
	for _, p := range strings.Fields(s.run("get", "pods", "--field-selector=spec.nodeName=node-0", "-o", "name")) {
		s.run("patch", p, "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Failed"}}`)
	}
	got = append(got, s.settle("node-0's pod failed"), s.events())
	harness.RecordOrCompare(t, *recordDaemonSetOn != "", daemonSetRefusalsFile, strings.Join(got, ""))
}
