// Package job compares admitd's Job controller (internal/controllers/job)
// with upstream's pkg/controller/job: each runs on the same Job and pods
// and must leave the same pods, status and events.
package job

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	upstream "k8s.io/kubernetes/pkg/controller/job"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	ours "github.com/admitd/admitd/internal/controllers/job"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// podState is a pod the Job controls when the controller starts.
type podState struct {
	name   string
	phase  corev1.PodPhase
	index  string // completion index annotation, if any
	exit   int32  // the container's exit code, when finished
	orphan bool   // no ownerReference, no finalizer
}

// scenario is a Job and its pods.
type scenario struct {
	name string
	job  func() *batchv1.Job
	pods []podState
}

// outcome is what a controller made of a scenario, normalized: pods (given
// ones by name, created ones as "<generateName>*"), the status (times
// dropped) and the events.
type outcome struct {
	Pods   []string
	Status string
	Events []string
}

var (
	uid       = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|job-uid`)
	generated = regexp.MustCompile(`\b(work-(?:[0-9]+-)?)[a-z0-9]{5}\b`)
)

func normalize(s string) string {
	return generated.ReplaceAllString(uid.ReplaceAllString(s, "<uid>"), "${1}xxxxx")
}

func describePod(p *corev1.Pod, given map[string]bool) string {
	name := p.Name
	if !given[name] {
		name = p.GenerateName + "*"
	}
	var kv []string
	for k, v := range p.Labels {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	owner := "none"
	if ref := metav1.GetControllerOf(p); ref != nil {
		owner = ref.Kind + "/" + ref.Name
	}
	deleting := ""
	if p.DeletionTimestamp != nil {
		deleting = " deleting"
	}
	phase := p.Status.Phase
	if phase == "" {
		phase = corev1.PodPending // kube-apiserver's default, which the fake does not set
	}
	return normalize(fmt.Sprintf("%s %s [%s] ann=%v fin=%v hostname=%q %s%s", name, phase, strings.Join(kv, ","), p.Annotations,
		p.Finalizers, p.Spec.Hostname, owner, deleting))
}

func describeStatus(s batchv1.JobStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "active=%d ready=%s terminating=%s succeeded=%d failed=%d start=%t completion=%t completed=%q failedIndexes=%s",
		s.Active, str(s.Ready), str(s.Terminating), s.Succeeded, s.Failed, s.StartTime != nil, s.CompletionTime != nil, s.CompletedIndexes, str(s.FailedIndexes))
	if u := s.UncountedTerminatedPods; u != nil {
		fmt.Fprintf(&b, " uncounted=%d/%d", len(u.Succeeded), len(u.Failed))
	}
	for _, c := range s.Conditions {
		fmt.Fprintf(&b, "; %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	return normalize(b.String())
}

func str[T any](p *T) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}

func read(t *testing.T, c kubernetes.Interface, given map[string]bool) outcome {
	ctx := context.Background()
	var o outcome
	pods, err := c.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		o.Pods = append(o.Pods, describePod(&pods.Items[i], given))
	}
	sort.Strings(o.Pods)
	j, err := c.BatchV1().Jobs("ns").Get(ctx, "work", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o.Status = describeStatus(j.Status)
	events, err := c.CoreV1().Events("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		o.Events = append(o.Events, normalize(fmt.Sprintf("%s %s %s: %s", e.Source.Component, e.Type, e.Reason, e.Message)))
	}
	sort.Strings(o.Events)
	return o
}

// observe reads the outcome once it has not changed for 2.5s (the
// controllers batch pod events by a second).
func observe(t *testing.T, c kubernetes.Interface, given map[string]bool) outcome {
	t.Helper()
	var last outcome
	stableSince := time.Now()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		cur := read(t, c, given)
		if !cmp.Equal(cur, last) {
			last, stableSince = cur, time.Now()
			continue
		}
		if time.Since(stableSince) > 2500*time.Millisecond {
			return cur
		}
	}
	t.Fatalf("no stable outcome; last %+v", last)
	return last
}

// pod is the scenario's pod of the Job j (uid and labels from j).
func (ps podState) pod(j *batchv1.Job) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: ps.name, Namespace: "ns", Labels: map[string]string{}},
		Spec: *j.Spec.Template.Spec.DeepCopy()}
	for k, v := range j.Spec.Template.Labels {
		p.Labels[k] = v
	}
	if !ps.orphan {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(j, batchv1.SchemeGroupVersion.WithKind("Job"))}
		p.Finalizers = []string{batchv1.JobTrackingFinalizer}
	}
	if ps.index != "" {
		p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: ps.index}
		p.Labels[batchv1.JobCompletionIndexAnnotation] = ps.index
	}
	p.Status.Phase = ps.phase
	switch ps.phase {
	case corev1.PodRunning:
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	case corev1.PodSucceeded, corev1.PodFailed:
		finished := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "busybox", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: ps.exit, StartedAt: finished, FinishedAt: finished}}}}
	}
	return p
}

// upstreamJob is the Job as kube-apiserver would have stored it: defaults,
// generated selector and template labels.
func upstreamJob(j *batchv1.Job) *batchv1.Job {
	j = j.DeepCopy()
	j.Namespace, j.UID, j.Generation = "ns", "job-uid", 1
	labels := map[string]string{batchv1.ControllerUidLabel: "job-uid", batchv1.JobNameLabel: j.Name,
		"controller-uid": "job-uid", "job-name": j.Name}
	j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "job-uid"}}
	j.Spec.ManualSelector = nil
	if j.Spec.Template.Labels == nil {
		j.Spec.Template.Labels = map[string]string{}
	}
	for k, v := range labels {
		j.Spec.Template.Labels[k] = v
	}
	if j.Spec.Parallelism == nil && j.Spec.Completions == nil {
		j.Spec.Completions = ptr.To(int32(1))
	}
	if j.Spec.Parallelism == nil {
		j.Spec.Parallelism = ptr.To(int32(1))
	}
	if j.Spec.BackoffLimit == nil {
		j.Spec.BackoffLimit = ptr.To(int32(6))
	}
	if j.Spec.CompletionMode == nil {
		j.Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if j.Spec.Suspend == nil {
		j.Spec.Suspend = ptr.To(false)
	}
	if j.Spec.PodReplacementPolicy == nil {
		j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		if j.Spec.PodFailurePolicy != nil {
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		}
	}
	return j
}

// runUpstream runs upstream's Job controller on a fake clientset that
// plays kube-apiserver's part the controller relies on: generated names
// and uids, and a pod with finalizers deleted is only marked until they
// are removed.
func runUpstream(t *testing.T, sc scenario) outcome {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.StaleControllerConsistencyJob, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j := upstreamJob(sc.job())
	objs := []runtime.Object{j}
	given := map[string]bool{}
	for _, ps := range sc.pods {
		p := ps.pod(j)
		p.UID = types.UID(utilrand.String(10))
		objs = append(objs, p)
		given[p.Name] = true
	}
	client := fake.NewClientset(objs...)
	client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pod := action.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if pod.Name == "" {
			pod.Name = pod.GenerateName + utilrand.String(5)
		}
		pod.UID = types.UID(utilrand.String(10))
		return false, nil, nil
	})
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	client.PrependReactor("delete", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		obj, err := client.Tracker().Get(podsGVR, "ns", action.(k8stesting.DeleteAction).GetName())
		if err != nil || len(obj.(*corev1.Pod).Finalizers) == 0 {
			return false, nil, nil
		}
		p := obj.(*corev1.Pod).DeepCopy()
		if p.DeletionTimestamp == nil {
			now := metav1.Now()
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, ptr.To[int64](0)
			if err := client.Tracker().Update(podsGVR, p, "ns"); err != nil {
				return true, nil, err
			}
		}
		return true, p, nil
	})
	go removeFinalizedPods(ctx, client)
	factory := informers.NewSharedInformerFactory(client, 0)
	jc, err := upstream.NewController(ctx, client, factory.Core().V1().Pods(), factory.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	go jc.Run(ctx, 1)
	return observe(t, client, given)
}

// removeFinalizedPods deletes the pods marked deleted whose finalizers
// are gone, as kube-apiserver does on the update that removes the last.
func removeFinalizedPods(ctx context.Context, client *fake.Clientset) {
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	for ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		list, err := client.Tracker().List(podsGVR, corev1.SchemeGroupVersion.WithKind("Pod"), "ns")
		if err != nil {
			continue
		}
		for _, p := range list.(*corev1.PodList).Items {
			if p.DeletionTimestamp != nil && len(p.Finalizers) == 0 {
				_ = client.Tracker().Delete(podsGVR, "ns", p.Name)
			}
		}
	}
}

// runOurs runs admitd's controller against an in-process API server
// holding the scenario's Job and pods, created through the API before the
// controller starts.
func runOurs(t *testing.T, sc scenario) outcome {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, cat := memory.New(), registry.NewCatalogue()
	api := apiserver.New(apiserver.Config{Store: store, Catalogue: cat, Admission: admission.NewChain()})
	if err := api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	admin := controllers.ControllerUser("admin")
	admin.Groups = append(admin.Groups, "system:masters")
	c, err := controllers.NewClientset(api.Loopback(admin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	j, err := c.BatchV1().Jobs("ns").Create(ctx, sc.job(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	given := map[string]bool{}
	for _, ps := range sc.pods {
		p := ps.pod(j)
		given[p.Name] = true
		created, err := c.CoreV1().Pods("ns").Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status = p.Status
		if _, err := c.CoreV1().Pods("ns").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	client, err := controllers.NewClientset(api.Loopback(ours.User))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	recorder, err := controllers.NewEventRecorder(ctx, api.Loopback(ours.User), ours.Component, log)
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := ours.New(ours.Config{Store: store, Catalogue: cat, Client: client, Recorder: recorder, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	go ctrl.Run(ctx)
	return observe(t, c, given)
}

// workJob is a Job "work" of completions pods, parallelism at a time.
func workJob(completions, parallelism int32, edit ...func(*batchv1.Job)) func() *batchv1.Job {
	return func() *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "work", Namespace: "ns"}, Spec: batchv1.JobSpec{
			Completions: ptr.To(completions), Parallelism: ptr.To(parallelism),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
		for _, e := range edit {
			e(j)
		}
		return j
	}
}

func indexed(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) }

// admitd's controller and upstream's, each on the same Job and pods, end
// with the same pods, status and events.
func TestControllerMatchesUpstream(t *testing.T) {
	for _, sc := range []scenario{
		{name: "creates parallelism pods", job: workJob(5, 2)},
		{name: "counts succeeded pods and keeps the running one", job: workJob(3, 3), pods: []podState{
			{name: "s1", phase: corev1.PodSucceeded}, {name: "s2", phase: corev1.PodSucceeded}, {name: "r1", phase: corev1.PodRunning}}},
		{name: "completes", job: workJob(2, 1), pods: []podState{{name: "s1", phase: corev1.PodSucceeded}, {name: "s2", phase: corev1.PodSucceeded}}},
		{name: "backoff limit exceeded deletes the running pod", job: workJob(3, 1, func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr.To(int32(1)) }),
			pods: []podState{{name: "f1", phase: corev1.PodFailed, exit: 1}, {name: "f2", phase: corev1.PodFailed, exit: 1}, {name: "r1", phase: corev1.PodRunning}}},
		{name: "too many pods: the pending one goes", job: workJob(2, 1), pods: []podState{
			{name: "r1", phase: corev1.PodRunning}, {name: "p1", phase: corev1.PodPending}}},
		{name: "suspended: its pods are deleted", job: workJob(2, 2, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }), pods: []podState{
			{name: "r1", phase: corev1.PodRunning}, {name: "r2", phase: corev1.PodRunning}}},
		{name: "indexed: index 1 done, 0 and 2 created", job: workJob(3, 3, indexed), pods: []podState{
			{name: "i1", phase: corev1.PodSucceeded, index: "1"}}},
		{name: "indexed: a repeated index and one out of range", job: workJob(3, 3, indexed), pods: []podState{
			{name: "a", phase: corev1.PodRunning, index: "0"}, {name: "b", phase: corev1.PodPending, index: "0"}, {name: "c", phase: corev1.PodRunning, index: "7"}}},
		{name: "pod failure policy FailJob", job: workJob(2, 1, func(j *batchv1.Job) {
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}}}}
		}), pods: []podState{{name: "f1", phase: corev1.PodFailed, exit: 42}}},
		{name: "pod failure policy Ignore", job: workJob(1, 1, func(j *batchv1.Job) {
			j.Spec.BackoffLimit = ptr.To(int32(0))
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{3}}}}}
		}), pods: []podState{{name: "f1", phase: corev1.PodFailed, exit: 3}}},
		{name: "success policy", job: workJob(3, 3, indexed, func(j *batchv1.Job) {
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To(int32(1))}}}
		}), pods: []podState{{name: "i0", phase: corev1.PodSucceeded, index: "0"}, {name: "i1", phase: corev1.PodRunning, index: "1"}}},
		{name: "adopts an orphan", job: workJob(2, 2), pods: []podState{{name: "o1", phase: corev1.PodRunning, orphan: true}}},
		{name: "no completions: done once one succeeded and none runs", job: workJob(1, 3, func(j *batchv1.Job) { j.Spec.Completions = nil }),
			pods: []podState{{name: "s1", phase: corev1.PodSucceeded}, {name: "f1", phase: corev1.PodFailed, exit: 1}}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			want := runUpstream(t, sc)
			got := runOurs(t, sc)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("outcome differs (-upstream +admitd):\n%s", d)
			}
		})
	}
}
