package job

import (
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestIntervals(t *testing.T) {
	for _, tc := range []struct {
		in          string
		completions int
		add         []int
		want        string
		total       int
	}{
		{in: "", completions: 5, add: nil, want: "", total: 0},
		{in: "", completions: 5, add: []int{0, 1}, want: "0,1", total: 2},
		{in: "0,1", completions: 5, add: []int{2}, want: "0-2", total: 3},
		{in: "1,3-5,7", completions: 10, add: []int{2, 6}, want: "1-7", total: 7},
		{in: "1,3-5,7", completions: 5, add: nil, want: "1,3,4", total: 3},
		{in: "x,2,4-a,6", completions: 10, add: []int{0}, want: "0,2,6", total: 3},
		{in: "0-2,3", completions: 10, add: nil, want: "0-3", total: 4},
	} {
		got := parseIntervals(tc.in, tc.completions).withIndexes(tc.add)
		if got.String() != tc.want || got.total() != tc.total {
			t.Errorf("parseIntervals(%q, %d).withIndexes(%v) = %q (total %d), want %q (total %d)", tc.in, tc.completions, tc.add, got, got.total(), tc.want, tc.total)
		}
	}
	iv := parseIntervals("1,3-5,9", 10)
	for ix, want := range map[int]bool{0: false, 1: true, 2: false, 3: true, 5: true, 6: false, 9: true, 10: false} {
		if iv.has(ix) != want {
			t.Errorf("%v.has(%d) = %t, want %t", iv, ix, !want, want)
		}
	}
}

func TestRemainingForFailures(t *testing.T) {
	now := time.Now()
	last := now.Add(-5 * time.Second)
	for failures, want := range map[int32]time.Duration{0: 0, 1: 5 * time.Second, 2: 15 * time.Second, 3: 35 * time.Second,
		6: 315 * time.Second, 7: 595 * time.Second, 8: 595 * time.Second, 20: 595 * time.Second} {
		if got := remainingForFailures(now, failures, &last); got != want {
			t.Errorf("remainingForFailures(%d failures, 5s ago) = %v, want %v", failures, got, want)
		}
	}
}

func finishedPod(name string, phase corev1.PodPhase, finished time.Time) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}, Status: corev1.PodStatus{Phase: phase,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finished)}}}}}}
}

func TestBackoffRecord(t *testing.T) {
	s := newBackoffStore()
	t0 := time.Now().Truncate(time.Second)
	r := s.next("ns/j", nil, []*corev1.Pod{finishedPod("a", corev1.PodFailed, t0), finishedPod("b", corev1.PodFailed, t0.Add(time.Second))})
	if r.failuresAfterLastSuccess != 2 || !r.lastFailureTime.Equal(t0.Add(time.Second)) {
		t.Fatalf("two failures: record %d failures, last %v; want 2, %v", r.failuresAfterLastSuccess, r.lastFailureTime, t0.Add(time.Second))
	}
	s.update(r)
	r = s.next("ns/j", nil, []*corev1.Pod{finishedPod("c", corev1.PodFailed, t0.Add(2*time.Second))})
	if r.failuresAfterLastSuccess != 3 {
		t.Fatalf("a third failure: %d failures, want 3", r.failuresAfterLastSuccess)
	}
	s.update(r)
	r = s.next("ns/j", []*corev1.Pod{finishedPod("d", corev1.PodSucceeded, t0.Add(3*time.Second))},
		[]*corev1.Pod{finishedPod("e", corev1.PodFailed, t0.Add(4*time.Second)), finishedPod("f", corev1.PodFailed, t0.Add(time.Second))})
	if r.failuresAfterLastSuccess != 1 || !r.lastFailureTime.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("a success then a failure: %d failures, last %v; want 1, %v", r.failuresAfterLastSuccess, r.lastFailureTime, t0.Add(4*time.Second))
	}
}

func exitedPod(exitCode int32, conditions ...corev1.PodConditionType) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Status: corev1.PodStatus{Phase: corev1.PodFailed,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode}}}}}}
	for _, c := range conditions {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue})
	}
	return p
}

func TestMatchPodFailurePolicy(t *testing.T) {
	policy := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
		{Action: batchv1.PodFailurePolicyActionCount, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{1}}},
	}}
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		msg    string
		count  bool
		action string
	}{
		{"disrupted", exitedPod(42, corev1.DisruptionTarget), "", false, "Ignore"},
		{"exit 42", exitedPod(42), "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1", true, "FailJob"},
		{"exit 3", exitedPod(3), "", true, "Count"},
		{"exit 1", exitedPod(1), "", true, "<nil>"},
	} {
		msg, count, action := matchPodFailurePolicy(policy, tc.pod)
		got := fmt.Sprintf("%q %t %s", ptr.Deref(msg, ""), count, ptrString(action))
		if want := fmt.Sprintf("%q %t %s", tc.msg, tc.count, tc.action); got != want {
			t.Errorf("%s: matchPodFailurePolicy = %s, want %s", tc.name, got, want)
		}
	}
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}

func TestMatchSuccessPolicy(t *testing.T) {
	policy := &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
		{SucceededIndexes: ptr.To("0,2-4"), SucceededCount: ptr.To(int32(3))},
		{SucceededCount: ptr.To(int32(5))},
	}}
	for succeeded, want := range map[string]string{"": "", "0,2": "", "0,2,3": "Matched rules at index 0", "5-9": "Matched rules at index 1", "1,5-7": ""} {
		msg, met := matchSuccessPolicy(policy, 10, parseIntervals(succeeded, 10))
		if msg != want || met != (want != "") {
			t.Errorf("matchSuccessPolicy(%q) = %q %t, want %q", succeeded, msg, met, want)
		}
	}
}

func indexedPod(name string, ix int, phase corev1.PodPhase, ready bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase}}
	if ix != noIndex {
		p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: fmt.Sprint(ix)}
	}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	return p
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestActivePodsForRemoval(t *testing.T) {
	indexed := &batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr.To(int32(3)), CompletionMode: ptr.To(batchv1.IndexedCompletion)}}
	pods := []*corev1.Pod{indexedPod("a0", 0, corev1.PodRunning, true), indexedPod("b0", 0, corev1.PodPending, false),
		indexedPod("c1", 1, corev1.PodRunning, true), indexedPod("none", noIndex, corev1.PodRunning, true),
		indexedPod("d5", 5, corev1.PodRunning, true), indexedPod("e2", 2, corev1.PodRunning, false)}
	if got, want := names(activePodsForRemoval(indexed, pods, 0)), []string{"none", "b0", "d5"}; !slices.Equal(got, want) {
		t.Errorf("indexed: activePodsForRemoval = %v, want %v", got, want)
	}
	if got, want := names(activePodsForRemoval(indexed, pods, 4)), []string{"none", "b0", "d5", "e2"}; !slices.Equal(got, want) {
		t.Errorf("indexed, 4 at least: activePodsForRemoval = %v, want %v", got, want)
	}
	plain := &batchv1.Job{}
	if got, want := names(activePodsForRemoval(plain, pods, 2)), []string{"b0", "e2"}; !slices.Equal(got, want) {
		t.Errorf("non-indexed: activePodsForRemoval = %v, want %v", got, want)
	}
}

func TestFirstPendingIndexes(t *testing.T) {
	j := &batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr.To(int32(8)), CompletionMode: ptr.To(batchv1.IndexedCompletion)}}
	sc := &syncContext{job: j, activePods: []*corev1.Pod{indexedPod("a", 1, corev1.PodRunning, false), indexedPod("b", 4, corev1.PodRunning, false)},
		succeededIndexes: parseIntervals("0,2", 8), failedIndexes: ptr.To(parseIntervals("5", 8))}
	if got, want := firstPendingIndexes(sc, 3, 8), []int{3, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("firstPendingIndexes = %v, want %v", got, want)
	}
}

func TestGenerateNameWithIndex(t *testing.T) {
	long := "a23456789012345678901234567890123456789012345678901234567890"
	for name, want := range map[string]string{"idx": "idx-3-", long: long[:maxGeneratedNameLength-3] + "-3-"} {
		if got := generateNameWithIndex(name, 3); got != want || len(got) > maxGeneratedNameLength {
			t.Errorf("generateNameWithIndex(%q, 3) = %q, want %q", name, got, want)
		}
	}
}

func TestWantActive(t *testing.T) {
	for _, tc := range []struct {
		completions               *int32
		parallelism, succ, active int32
		want                      int32
	}{
		{ptr.To(int32(5)), 2, 0, 0, 2},
		{ptr.To(int32(5)), 2, 4, 1, 1},
		{ptr.To(int32(5)), 2, 6, 0, 0},
		{nil, 3, 0, 1, 3},
		{nil, 3, 1, 2, 2},
	} {
		j := &batchv1.Job{Spec: batchv1.JobSpec{Completions: tc.completions, Parallelism: ptr.To(tc.parallelism)}}
		if got := wantActive(j, tc.succ, tc.active); got != tc.want {
			t.Errorf("wantActive(completions %v, parallelism %d, succeeded %d, active %d) = %d, want %d",
				ptrString(tc.completions), tc.parallelism, tc.succ, tc.active, got, tc.want)
		}
	}
}
