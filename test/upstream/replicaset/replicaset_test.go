// Package replicaset compares admitd's ReplicaSet controller
// (internal/controllers/replicaset) with upstream's pkg/controller on the
// same inputs: which pods a scale down deletes first, and the pod a
// controller creates from its template.
package replicaset

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/replicaset"
)

// randomPod is an active pod in one of the states the ranking tells apart:
// assigned or not (to one of three nodes), phase, readiness and since
// when, deletion cost (valid or not), restarts, creation time.
func randomPod(r *rand.Rand, i int, now time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%02d", i), Namespace: "ns",
		UID:               types.UID(fmt.Sprintf("uid-%03d", r.IntN(1000))),
		CreationTimestamp: metav1.NewTime(now.Add(-time.Duration(r.IntN(4000)) * time.Second))}}
	if r.IntN(3) > 0 {
		p.Spec.NodeName = "node-" + strconv.Itoa(r.IntN(3))
	}
	p.Status.Phase = []corev1.PodPhase{corev1.PodPending, corev1.PodUnknown, corev1.PodRunning, ""}[r.IntN(4)]
	if r.IntN(2) == 0 {
		status := corev1.ConditionTrue
		if r.IntN(4) == 0 {
			status = corev1.ConditionFalse
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status,
			LastTransitionTime: metav1.NewTime(now.Add(-time.Duration(r.IntN(4000)) * time.Second))}}
	}
	switch r.IntN(6) {
	case 0:
		p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": strconv.Itoa(r.IntN(5) - 2)}
	case 1:
		p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": []string{"+1", "007", "x", "99999999999"}[r.IntN(4)]}
	}
	if r.IntN(3) == 0 {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: int32(r.IntN(3))}}
	}
	if r.IntN(4) == 0 {
		p.Spec.InitContainers = []corev1.Container{{Name: "side", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "side", RestartCount: int32(r.IntN(3))}}
	}
	return p
}

// upstreamPodsToDelete is upstream's getPodsToDelete (unexported in
// pkg/controller/replicaset): rank each pod by the active related pods on
// its node, sort with controller.ActivePodsWithRanks, take the first n.
func upstreamPodsToDelete(pods, related []*corev1.Pod, n int, now time.Time) []*corev1.Pod {
	onNode := map[string]int{}
	for _, p := range related {
		if controller.IsPodActive(p) {
			onNode[p.Spec.NodeName]++
		}
	}
	ranks := make([]int, len(pods))
	for i, p := range pods {
		ranks[i] = onNode[p.Spec.NodeName]
	}
	sort.Sort(controller.ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: metav1.NewTime(now)})
	return pods[:n]
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

// On 2000 random sets of pods, admitd deletes the same pods as upstream,
// in the same order.
func TestPodsToDeleteMatchesUpstream(t *testing.T) {
	now := time.Now()
	for seed := range uint64(2000) {
		r := rand.New(rand.NewPCG(seed, 26))
		n := 2 + r.IntN(12)
		var pods, related []*corev1.Pod
		for i := range n {
			p := randomPod(r, i, now)
			pods = append(pods, p)
			related = append(related, p)
		}
		for i := range r.IntN(5) {
			related = append(related, randomPod(r, 100+i, now))
		}
		diff := 1 + r.IntN(n-1)
		ours := names(replicaset.PodsToDelete(append([]*corev1.Pod(nil), pods...), related, diff, now))
		theirs := names(upstreamPodsToDelete(append([]*corev1.Pod(nil), pods...), related, diff, now))
		if d := cmp.Diff(theirs, ours); d != "" {
			t.Fatalf("seed %d: pods to delete differ (-upstream +admitd):\n%s", seed, d)
		}
	}
}

// The pod created from a template is upstream's GetPodFromTemplate's, for
// a short name and one too long for a dash.
func TestPodFromTemplateMatchesUpstream(t *testing.T) {
	template := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
		Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}, Finalizers: []string{"example.com/f"},
		Name: "ignored", Namespace: "ignored"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	for _, name := range []string{"web", strings.Repeat("a", 253)} {
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "rs-uid"}}
		ref := metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
		want, err := controller.GetPodFromTemplate(template, rs, ref)
		if err != nil {
			t.Fatal(err)
		}
		got := replicaset.PodFromTemplate(template, name, *ref)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%d-character name: pod differs (-upstream +admitd):\n%s", len(name), d)
		}
	}
}
