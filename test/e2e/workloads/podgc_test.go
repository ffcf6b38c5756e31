package workloads

import (
	"github.com/admitd/admitd/test/e2e/harness"

	"context"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// podGCRecordKubeconfig, when set, is the kubeconfig of kube-apiserver +
// kube-controller-manager 1.37.2 started with
// KCM_FLAGS="--terminated-pod-gc-threshold=2 --controllers=*,-node-lifecycle-controller"
// (so that the hand-made nodes keep the status the test gives them): the
// pod GC session runs there and is written to podGCSessionFile.
const (
	podGCRecordKubeconfig = "PODGC_RECORD_KUBECONFIG"
	podGCSessionFile      = "testdata/podgc/kcm-1.37.2.txt"
	// holdFinalizer keeps a deleted pod visible until the test lets it go.
	holdFinalizer = "example.com/hold"
)

// podGCPodJSONPath is what the session prints of a pod the collector
// deleted: its phase, conditions, deletion grace and writers.
const podGCPodJSONPath = `{.metadata.name} phase={.status.phase} observed={.status.observedGeneration} grace={.metadata.deletionGracePeriodSeconds}{"\n"}` +
	`{range .status.conditions[*]}  {.type} {.status} {.reason} "{.message}" observed={.observedGeneration}{"\n"}{end}` +
	`{range .metadata.managedFields[*]}  managed by {.manager} {.operation} {.subresource}{"\n"}{end}`

type podGCSession struct {
	t      *testing.T
	a      *admitd
	c      kubernetes.Interface
	ns     string
	record bool
}

// The pod GC session recorded on kube-apiserver + kube-controller-manager
// 1.37.2 (testdata/podgc; the test plays the kubelet) and replayed on
// admitd (--terminated-pod-gc-threshold=2, its check period and
// quarantine shortened): a pod whose node is deleted is patched Failed
// with DisruptionTarget/DeletionByPodGC and force-deleted; a terminating
// pod never scheduled, and one on a not-ready node tainted out-of-service,
// are patched Failed and force-deleted; of five terminated pods the
// evicted one and the two oldest go, two stay.
func TestPodGCSessionMatchesKCM(t *testing.T) {
	t.Parallel()
	s := startPodGCSession(t)
	var got []string
	for _, n := range []struct {
		name  string
		ready bool
		taint string
	}{{"gc-live", true, ""}, {"gc-doomed", true, ""}, {"gc-oos", false, corev1.TaintNodeOutOfService}} {
		s.node(n.name, n.ready, n.taint)
	}
	s.pod("orphan", "gc-doomed", true, true)
	s.pod("unscheduled", "", true, false)
	s.pod("out-of-service", "gc-oos", true, true)
	s.a.MustKubectl(t, "", "-n", s.ns, "delete", "pod", "unscheduled", "out-of-service", "--wait=false")
	s.a.MustKubectl(t, "", "delete", "node", "gc-doomed")
	for _, name := range []string{"orphan", "unscheduled", "out-of-service"} {
		s.waitFor(name+" failed and force-deleted", 90*time.Second, func() bool {
			p, err := s.c.CoreV1().Pods(s.ns).Get(t.Context(), name, metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodFailed && p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds == 0
		})
		got = append(got, sortManagers(s.a.MustKubectl(t, "", "-n", s.ns, "get", "pod", name, "-o", "jsonpath="+podGCPodJSONPath)))
		s.release(name)
	}
	got = append(got, s.terminatedOverThreshold()...)
	harness.RecordOrCompare(t, s.record, podGCSessionFile, strings.Join(got, ""))
}

// sortManagers sorts the "managed by" lines of a pod's description: the
// server orders managedFields by time in seconds, then manager, and the
// collector's write may fall in the second of the pod's create or later.
func sortManagers(desc string) string {
	var rest, managers []string
	for _, l := range strings.Split(strings.TrimSuffix(desc, "\n"), "\n") {
		if strings.HasPrefix(l, "  managed by ") {
			managers = append(managers, l)
		} else {
			rest = append(rest, l)
		}
	}
	sort.Strings(managers)
	return strings.Join(append(rest, managers...), "\n") + "\n"
}

// terminatedOverThreshold creates five pods a second apart (names in the
// reverse order of age), ends them (the youngest evicted), and returns
// which stay.
func (s *podGCSession) terminatedOverThreshold() []string {
	names := []string{"done-4", "done-3", "done-2", "done-1", "done-evicted"}
	for i, name := range names {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond) // creation timestamps have seconds
		}
		s.pod(name, "gc-live", false, true)
	}
	// ended in the order they go, so that a pass between two of them
	// deletes what a pass after all would
	s.end("done-evicted", corev1.PodFailed, "Evicted")
	for i, name := range names[:4] {
		s.end(name, []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed}[i%2], "")
	}
	var left string
	s.waitFor("two terminated pods left", 60*time.Second, func() bool {
		left = s.a.MustKubectl(s.t, "", "-n", s.ns, "get", "pods", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.reason}{"\n"}{end}`)
		return strings.Count(left, "\n") == 2
	})
	lines := strings.Split(strings.TrimSpace(left), "\n")
	sort.Strings(lines)
	return []string{"## terminated pods left with a threshold of 2\n" + strings.Join(lines, "\n") + "\n"}
}

func startPodGCSession(t *testing.T) *podGCSession {
	s := &podGCSession{t: t, ns: "podgc"}
	if kc := os.Getenv(podGCRecordKubeconfig); kc != "" {
		s.a, s.record = &admitd{Kubeconfig: kc}, true
	} else {
		s.a = startAdmitd(t, t.TempDir(), "--terminated-pod-gc-threshold=2", "--pod-gc-check-period=300ms", "--pod-gc-quarantine-time=1s")
	}
	s.c = kubernetes.NewForConfigOrDie(s.a.RestConfig(t))
	s.a.MustKubectl(t, "", "create", "namespace", s.ns)
	s.waitFor("the default service account", 10*time.Second, func() bool {
		_, err := s.c.CoreV1().ServiceAccounts(s.ns).Get(t.Context(), "default", metav1.GetOptions{})
		return err == nil
	})
	return s
}

func (s *podGCSession) waitFor(what string, timeout time.Duration, done func() bool) {
	s.t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if done() {
			return
		}
	}
	s.t.Fatalf("timed out waiting for %s", what)
}

// node registers a node as its kubelet would, Ready or not, with an
// extra NoExecute taint.
func (s *podGCSession) node(name string, ready bool, taint string) {
	ctx := s.t.Context()
	if err := createNode(ctx, s.c, name, map[string]string{"kubernetes.io/hostname": name}); err != nil {
		s.t.Fatal(err)
	}
	if ready && taint == "" {
		return
	}
	retry(s.t, func() error {
		n, err := s.c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Conditions[0].Status, n.Status.Conditions[0].Reason = corev1.ConditionFalse, "KubeletNotReady"
		_, err = s.c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	s.a.MustKubectl(s.t, "", "taint", "node", name, taint+"=nodeshutdown:NoExecute")
}

func retry(t *testing.T, f func() error) {
	t.Helper()
	err := f()
	for apierrors.IsConflict(err) {
		err = f()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// pod creates a pod bound to node (none: ""), held by a finalizer when
// hold, tolerating every taint, and Running when run (as its kubelet
// would write it).
func (s *podGCSession) pod(name, node string, hold, run bool) {
	ctx := s.t.Context()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
	if hold {
		p.Finalizers = []string{holdFinalizer}
	}
	p, err := s.c.CoreV1().Pods(s.ns).Create(ctx, p, metav1.CreateOptions{FieldManager: "podgc-e2e"})
	if err != nil {
		s.t.Fatal(err)
	}
	if !run {
		return
	}
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	if _, err := s.c.CoreV1().Pods(s.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{FieldManager: "podgc-e2e-kubelet"}); err != nil {
		s.t.Fatal(err)
	}
}

// end writes the pod's phase (and reason) as its kubelet would.
func (s *podGCSession) end(name string, phase corev1.PodPhase, reason string) {
	retry(s.t, func() error {
		p, err := s.c.CoreV1().Pods(s.ns).Get(s.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.Phase, p.Status.Reason = phase, reason
		_, err = s.c.CoreV1().Pods(s.ns).UpdateStatus(s.t.Context(), p, metav1.UpdateOptions{FieldManager: "podgc-e2e-kubelet"})
		return err
	})
}

// release removes the pod's finalizer and waits until it is gone.
func (s *podGCSession) release(name string) {
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := s.c.CoreV1().Pods(s.ns).Patch(s.t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.t.Fatal(err)
	}
	s.waitFor(name+" gone", 10*time.Second, func() bool {
		_, err := s.c.CoreV1().Pods(s.ns).Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}
