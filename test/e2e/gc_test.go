package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// ownedChain creates a Deployment, a ReplicaSet it owns and two Pods the
// ReplicaSet owns, as the controllers would (blockOwnerDeletion set).
func ownedChain(t *testing.T, a *admitd, name string) {
	t.Helper()
	a.MustKubectl(t, "", "create", "deployment", name, "--image=nginx")
	deployUID := a.MustKubectl(t, "", "get", "deployment", name, "-o", "jsonpath={.metadata.uid}")
	a.MustKubectl(t, fmt.Sprintf(`apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: %[1]s-rs
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s, uid: %[2]s, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: c, image: nginx}]}
`, name, deployUID), "apply", "-f", "-")
	rsUID := a.MustKubectl(t, "", "get", "replicaset", name+"-rs", "-o", "jsonpath={.metadata.uid}")
	for i := 1; i <= 2; i++ {
		a.MustKubectl(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[1]s-pod-%[3]d
  labels: {app: %[1]s}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: %[1]s-rs, uid: %[2]s, controller: true, blockOwnerDeletion: true}]
spec: {containers: [{name: c, image: nginx}]}
`, name, rsUID, i), "apply", "-f", "-")
	}
}

func names(a *admitd, t *testing.T, what string) string {
	t.Helper()
	return strings.TrimSpace(a.MustKubectl(t, "", "get", what, "-o", "name"))
}

func TestKubectlDeleteCascades(t *testing.T) {
	t.Parallel()
	// Without the workload controllers: the chains are built by hand (a
	// Deployment controller would make its own ReplicaSet beside them).
	a := startAdmitd(t, t.TempDir(), withoutWorkloadControllers)

	t.Run("foreground waits for the whole chain", func(t *testing.T) {
		ownedChain(t, a, "fg")
		out := a.MustKubectl(t, "", "delete", "deployment", "fg", "--cascade=foreground", "--wait", "--timeout=30s")
		if !strings.Contains(out, `deployment.apps "fg" deleted`) {
			t.Fatalf("kubectl delete --cascade=foreground = %q", out)
		}
		// kubectl returned once the deployment was gone, which foreground
		// deletion allows only after its blocking dependents.
		if got := names(a, t, "deployments,replicasets,pods"); got != "" {
			t.Errorf("after a foreground delete: %q, want nothing left", got)
		}
	})

	t.Run("background deletes dependents after the owner", func(t *testing.T) {
		ownedChain(t, a, "bg")
		a.MustKubectl(t, "", "delete", "deployment", "bg", "--wait", "--timeout=30s")
		waitFor(t, "the replica set and pods are collected", func() bool { return names(a, t, "replicasets,pods") == "" })
	})

	t.Run("orphan keeps dependents without the owner reference", func(t *testing.T) {
		ownedChain(t, a, "or")
		a.MustKubectl(t, "", "delete", "deployment", "or", "--cascade=orphan", "--wait", "--timeout=30s")
		if got := names(a, t, "replicasets"); got != "replicaset.apps/or-rs" {
			t.Fatalf("replica sets after an orphaning delete: %q", got)
		}
		if refs := a.MustKubectl(t, "", "get", "replicaset", "or-rs", "-o", "jsonpath={.metadata.ownerReferences}"); refs != "" {
			t.Errorf("orphaned replica set keeps owner references %s", refs)
		}
		if got := names(a, t, "pods"); got != "pod/or-pod-1\npod/or-pod-2" {
			t.Errorf("pods of the orphaned replica set: %q", got)
		}
	})

	t.Run("a dependent of a missing owner is collected", func(t *testing.T) {
		a.MustKubectl(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: stray
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: ghost, uid: 6d1f1d54-0000-4000-8000-000000000000}]
`, "apply", "-f", "-")
		waitFor(t, "the stray config map is collected", func() bool {
			_, _, err := a.Kubectl(t, "", "get", "configmap", "stray")
			return err != nil
		})
	})
}
