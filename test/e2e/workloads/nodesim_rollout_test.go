package workloads

import (
	"context"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// With simulated nodes, a Deployment rolls out as on a cluster, with no
// one playing the kubelet: kubectl rollout status completes after kubectl
// create deployment, kubectl set image and kubectl rollout undo; the
// rolling update never has more pods than replicas + maxSurge nor fewer
// available than replicas - maxUnavailable (as the Deployment's status
// reports them, every write of it watched, and as its ReplicaSets ask
// for them); the pods run the image undone to.
func TestRolloutOnSimulatedNodes(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--simulated-nodes=3")
	a.WaitFor(t, "the default ServiceAccount", "get", "serviceaccount", "default")
	a.MustKubectl(t, "", "create", "deployment", "web", "--image=nginx", "--replicas=4")
	a.MustKubectl(t, "", "rollout", "status", "deployment/web", "--timeout=60s")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	w, err := cs.AppsV1().Deployments("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=web"})
	if err != nil {
		t.Fatal(err)
	}
	rsWatch, err := cs.AppsV1().ReplicaSets("default").Watch(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	most, fewestAvailable, writes := int32(0), int32(4), 0
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok {
				continue
			}
			mu.Lock()
			fewestAvailable = min(fewestAvailable, d.Status.AvailableReplicas)
			writes++
			mu.Unlock()
		}
	}()
	// The pods the rollout asks for are the ReplicaSets' spec.replicas,
	// summed after each write of one of them (one watch: in the order
	// they were written). The Deployment's status.replicas sums the
	// ReplicaSets' statuses instead, which may count a pod an old
	// ReplicaSet is about to delete beside one the new one has just made,
	// on kube-controller-manager too.
	go func() {
		defer func() { done <- struct{}{} }()
		specs := map[string]int32{}
		for ev := range rsWatch.ResultChan() {
			rs, ok := ev.Object.(*appsv1.ReplicaSet)
			if !ok || rs.Spec.Replicas == nil {
				continue
			}
			if ev.Type == watch.Deleted {
				delete(specs, rs.Name)
			} else {
				specs[rs.Name] = *rs.Spec.Replicas
			}
			var sum int32
			for _, n := range specs {
				sum += n
			}
			mu.Lock()
			most = max(most, sum)
			mu.Unlock()
		}
	}()

	a.MustKubectl(t, "", "set", "image", "deployment/web", "nginx=nginx:1.27")
	a.MustKubectl(t, "", "rollout", "status", "deployment/web", "--timeout=60s")
	a.MustKubectl(t, "", "rollout", "undo", "deployment/web")
	out := a.MustKubectl(t, "", "rollout", "status", "deployment/web", "--timeout=60s")
	if !strings.Contains(out, `deployment "web" successfully rolled out`) {
		t.Errorf("kubectl rollout status printed %q", out)
	}
	w.Stop()
	rsWatch.Stop()
	<-done
	<-done
	mu.Lock()
	defer mu.Unlock()
	t.Logf("during the rollouts: at most %d pods, at least %d available, %d writes of the Deployment", most, fewestAvailable, writes)
	// 4 replicas, the default 25% each: maxSurge 1 (rounded up),
	// maxUnavailable 1 (rounded down).
	if most > 5 || fewestAvailable < 3 || writes < 4 {
		t.Errorf("during the rollouts: at most %d pods, at least %d available over %d writes of the Deployment; want at most 5 and at least 3",
			most, fewestAvailable, writes)
	}
	out = a.MustKubectl(t, "", "get", "deployment", "web", "-o",
		`jsonpath={.metadata.annotations.deployment\.kubernetes\.io/revision} {.spec.template.spec.containers[0].image} {.status.readyReplicas}/{.status.updatedReplicas}`)
	if out != "3 nginx 4/4" {
		t.Errorf("the Deployment after the undo: %q, want revision 3, image nginx, 4/4 ready and updated", out)
	}
	// The replaced pods may still be in their grace period: only the others count.
	out = a.MustKubectl(t, "", "get", "pods", "-l", "app=web", "-o",
		`jsonpath={range .items[*]}{.metadata.deletionTimestamp}|{.spec.containers[0].image} {.status.phase} {.spec.nodeName}{"\n"}{end}`)
	var running []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if live, ok := strings.CutPrefix(line, "|"); ok {
			running = append(running, live)
		}
	}
	if len(running) != 4 || strings.Count(strings.Join(running, "\n"), "nginx Running node-") != 4 {
		t.Errorf("pods after the undo (want 4 running nginx on simulated nodes, besides the terminating ones):\n%s", out)
	}
}
