package nodesim

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// newTestSimulator is a simulator with nodes simulated nodes of a
// kubelet's default capacity and no server: its pods are stored with
// podStored and placed with snapshot, Place and assume, as the
// scheduler's loop does.
func newTestSimulator(tb testing.TB, nodes int) *Simulator {
	s := &Simulator{nodes: map[string]*simNode{}, pods: map[string]*corev1.Pod{}, assumed: map[string]string{},
		unschedulable: map[string]bool{}, podIPs: newPodIPs(), indexes: map[string]int{},
		counted: map[string]countedPod{}, accounts: accounts{},
		podQueue: newQueue(), schedQueue: newQueue(), nodeQueue: newQueue()}
	tb.Cleanup(func() { s.podQueue.ShutDown(); s.schedQueue.ShutDown(); s.nodeQueue.ShutDown() })
	for i := range nodes {
		s.nodes[NodeName(i)] = &simNode{node: readyNode(NodeName(i)), index: i}
	}
	return s
}

func readyNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"),
			corev1.ResourcePods: resource.MustParse("110"),
		}}}
}

// deploymentPod is the i-th pending pod of a Deployment: one container
// requesting 100m of cpu and 128Mi of memory.
func deploymentPod(i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("web-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
			ResourceVersion: "1", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{SchedulerName: DefaultSchedulerName, Containers: []corev1.Container{{Name: "web", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}}}},
	}
}

// storePod stores pod as the watch brings it (the version after pod's).
func storePod(s *Simulator, pod *corev1.Pod) *corev1.Pod {
	pod = pod.DeepCopy()
	rv, _ := strconv.Atoi(pod.ResourceVersion)
	pod.ResourceVersion = strconv.Itoa(rv + 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.podStored(pod)
	return pod
}

// placeAndBind runs one scheduling cycle for the stored pending pod and,
// when a node fits it, assumes it there and stores it bound and then
// running, as the bind and the kubelet's status write come back. It
// returns the node (or "") and the message.
func placeAndBind(s *Simulator, pod *corev1.Pod) (string, string) {
	key := pod.Namespace + "/" + pod.Name
	pending, states := s.snapshot(key)
	if pending == nil {
		return "", "not pending"
	}
	best, msg := Place(pending, states)
	if best < 0 {
		return "", msg
	}
	node := states[best].Node.Name
	s.assume(key, pod.UID, node)
	bound := pending.DeepCopy()
	bound.Spec.NodeName = node
	bound = storePod(s, bound)
	bound.Status.Phase = corev1.PodRunning
	storePod(s, bound)
	return node, ""
}

// BenchmarkSchedule places pods one after another on 100 simulated
// nodes as the scheduler's loop does (store pending, snapshot, Place,
// assume, store bound, store running); ns/pod is the cost of one pod.
func BenchmarkSchedule(b *testing.B) {
	for _, pods := range []int{100, 1000, 3000} {
		b.Run(fmt.Sprintf("%dPods_100Nodes", pods), func(b *testing.B) {
			for b.Loop() {
				s := newTestSimulator(b, 100)
				for i := range pods {
					if node, msg := placeAndBind(s, storePod(s, deploymentPod(i))); node == "" {
						b.Fatalf("pod %d not placed: %s", i, msg)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pods), "ns/pod")
		})
	}
}
