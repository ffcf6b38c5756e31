package workloads

import (
	"strings"
	"testing"
)

// With simulated nodes, a bare pod is scheduled and run: kubectl wait for
// its Ready condition completes, kubectl get nodes lists the nodes Ready,
// and a pod no node fits is described as kube-scheduler describes it.
func TestKubectlWaitOnSimulatedNodes(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--simulated-nodes=3", "--enable-admission-plugins=NodeRestriction")
	a.MustKubectl(t, "", "wait", "--for=condition=Ready", "node/node-0", "node/node-1", "node/node-2", "--timeout=30s")
	a.MustKubectl(t, "", "run", "web", "--image=nginx")
	out := a.MustKubectl(t, "", "wait", "--for=condition=Ready", "pod/web", "--timeout=30s")
	if strings.TrimSpace(out) != "pod/web condition met" {
		t.Errorf("kubectl wait printed %q", out)
	}
	out = a.MustKubectl(t, "", "get", "nodes", "--no-headers")
	if n := strings.Count(out, " Ready "); n != 3 {
		t.Errorf("kubectl get nodes: %d Ready, want 3:\n%s", n, out)
	}
	a.MustKubectl(t, "", "run", "big", "--image=nginx", "--overrides", `{"spec":{"containers":[{"name":"big","image":"nginx","resources":{"requests":{"cpu":"64"}}}]}}`)
	out = a.MustKubectl(t, "", "wait", "--for=condition=PodScheduled=false", "pod/big", "--timeout=30s")
	if strings.TrimSpace(out) != "pod/big condition met" {
		t.Errorf("kubectl wait printed %q", out)
	}
	out = a.MustKubectl(t, "", "describe", "pod", "big")
	want := "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	if !strings.Contains(out, "FailedScheduling") || !strings.Contains(out, want) {
		t.Errorf("kubectl describe pod big lacks the FailedScheduling event %q:\n%s", want, out)
	}
	a.MustKubectl(t, "", "delete", "pod", "web", "--grace-period=1", "--wait=true", "--timeout=30s")
}
