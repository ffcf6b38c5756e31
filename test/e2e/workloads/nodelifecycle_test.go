package workloads

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const deadNode = `apiVersion: v1
kind: Node
metadata:
  name: dead
  labels:
    kubernetes.io/os: linux
`

// doomedPod is bound to the dead node and tolerates its unreachable
// taint for a second.
const doomedPod = `apiVersion: v1
kind: Pod
metadata:
  name: doomed
spec:
  nodeName: dead
  containers:
  - name: c
    image: nginx
  tolerations:
  - key: node.kubernetes.io/unreachable
    operator: Exists
    effect: NoExecute
    tolerationSeconds: 1
`

// TestNodeLifecycleWithKubectl: a Node no kubelet serves, created with
// kubectl beside a simulated node, gets the beta OS label at once, is
// given the startup grace period, then its conditions are Unknown and it
// is tainted unreachable; its pod, tolerating that for a second, is
// deleted by the taint eviction controller with the DisruptionTarget
// condition; the events of both controllers say so.
func TestNodeLifecycleWithKubectl(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--simulated-nodes=1", "--node-startup-grace-period=3s", "--node-monitor-period=500ms", "--node-eviction-rate=10")
	a.MustKubectl(t, "", "wait", "--for=condition=Ready", "node/node-0", "--timeout=30s")
	a.MustKubectl(t, deadNode, "create", "-f", "-")
	a.MustKubectl(t, doomedPod, "create", "-f", "-")
	a.MustKubectl(t, "", "wait", "--for=jsonpath={.metadata.labels.beta\\.kubernetes\\.io/os}=linux", "node/dead", "--timeout=30s")
	a.MustKubectl(t, "", "wait", "--for=condition=Ready=Unknown", "node/dead", "--timeout=30s")
	reason := a.MustKubectl(t, "", "get", "node", "dead", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}`)
	if reason != "NodeStatusNeverUpdated" {
		t.Errorf("Ready reason of the dead node = %q, want NodeStatusNeverUpdated", reason)
	}
	var taints, deleted string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		taints = a.MustKubectl(t, "", "get", "node", "dead", "-o", `jsonpath={range .spec.taints[*]}{.key}:{.effect} {end}`)
		deleted = a.MustKubectl(t, "", "get", "pod", "doomed", "--ignore-not-found", "-o", `jsonpath={.metadata.deletionTimestamp}`)
		if deleted != "" {
			break
		}
	}
	got := strings.Fields(taints)
	slices.Sort(got) // the two are added by different loops, in either order
	if want := []string{"node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unreachable:NoSchedule"}; !slices.Equal(got, want) {
		t.Errorf("taints of the dead node = %q, want %q", got, want)
	}
	if deleted == "" {
		t.Fatal("the pod tolerating the unreachable taint for 1s was not deleted within 30s")
	}
	cond := a.MustKubectl(t, "", "get", "pod", "doomed", "-o", `jsonpath={.status.conditions[?(@.type=="DisruptionTarget")].reason}`)
	if cond != "DeletionByTaintManager" {
		t.Errorf("DisruptionTarget reason of the deleted pod = %q, want DeletionByTaintManager", cond)
	}
	// events are written after the fact, by the recorders' own loops
	var events string
	for _, want := range []string{
		"node-controller RegisteredNode: Node dead event: Registered Node dead in Controller",
		"taint-eviction-controller TaintManagerEviction: Marking for deletion Pod default/doomed",
	} {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			events = a.MustKubectl(t, "", "get", "events", "-o", `jsonpath={range .items[*]}{.source.component} {.reason}: {.message}{"\n"}{end}`)
			if strings.Contains(events, want) {
				break
			}
		}
		if !strings.Contains(events, want) {
			t.Errorf("events lack %q:\n%s", want, events)
		}
	}
	metrics := a.Metrics(t)
	for _, want := range []string{
		`node_collector_evictions_total{zone=""} 1`, `node_collector_zone_size{zone=""} 2`,
		`node_collector_unhealthy_nodes_in_zone{zone=""} 1`, "taint_eviction_controller_pod_deletions_total 1",
	} {
		if !strings.Contains(metrics, "\n"+want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if got := a.MustKubectl(t, "", "get", "node", "node-0", "-o", `jsonpath={.spec.taints}`); got != "" {
		t.Errorf("the simulated node, Ready, has taints %s", got)
	}
}
