package workloads

import (
	"github.com/admitd/admitd/test/e2e/harness"

	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

const (
	jobTranscript         = "testdata/job/kcm-1.37.2.txt"
	podCompleteAnnotation = "pod-complete.stage.kwok.x-k8s.io/delay"
)

// jobSession drives Jobs through kubectl and describes where each ends:
// the Job's status and conditions, its pods' metadata, its events.
type jobSession struct {
	t      *testing.T
	a      *admitd
	record bool // against kube-apiserver + kube-controller-manager: play the kubelet
}

func (s *jobSession) kubectl(ns string, args ...string) string {
	s.t.Helper()
	return s.a.MustKubectl(s.t, "", append([]string{"-n", ns}, args...)...)
}

func (s *jobSession) createNamespace(ns string, labels ...string) {
	s.t.Helper()
	s.a.MustKubectl(s.t, "", "create", "namespace", ns)
	if len(labels) > 0 {
		s.a.MustKubectl(s.t, "", append([]string{"label", "namespace", ns}, labels...)...)
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, _, err := s.a.Kubectl(s.t, "", "-n", ns, "get", "serviceaccount", "default"); err == nil {
			return
		}
	}
	s.t.Fatalf("namespace %s has no default ServiceAccount", ns)
}

func (s *jobSession) createJob(ns, manifest string) {
	s.t.Helper()
	data, err := os.ReadFile("testdata/job/" + manifest)
	if err != nil {
		s.t.Fatal(err)
	}
	s.a.MustKubectl(s.t, string(data), "-n", ns, "create", "-f", "-")
}

func (s *jobSession) job(ns, name string) (*batchv1.Job, bool) {
	s.t.Helper()
	out, _, err := s.a.Kubectl(s.t, "", "-n", ns, "get", "job", name, "-o", "json")
	if err != nil {
		return nil, false
	}
	var j batchv1.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		s.t.Fatal(err)
	}
	return &j, true
}

func (s *jobSession) pods(ns, job string) []corev1.Pod {
	s.t.Helper()
	var list corev1.PodList
	if err := json.Unmarshal([]byte(s.kubectl(ns, "get", "pods", "-l", "batch.kubernetes.io/job-name="+job, "-o", "json")), &list); err != nil {
		s.t.Fatal(err)
	}
	return list.Items
}

// playKubelet, when recording, runs the Job's pending pods and finishes
// its running ones with exit 0, as a node would (admitd's simulated
// nodes do it themselves); a pod with kwok's pod-complete annotation
// keeps running (its Job's test finishes it, or its deadline).
func (s *jobSession) playKubelet(ns, job string) {
	if !s.record {
		return
	}
	for _, p := range s.pods(ns, job) {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodPending:
			s.patchPodStatus(ns, p.Name, `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
		case p.Status.Phase == corev1.PodRunning && p.Annotations[podCompleteAnnotation] == "":
			s.patchPodStatus(ns, p.Name, finishedPodStatus(p.Spec.Containers[0].Name, "Succeeded", 0))
		}
	}
}

func finishedPodStatus(container, phase string, exitCode int) string {
	now := time.Now().UTC().Format(time.RFC3339)
	return fmt.Sprintf(`{"status":{"phase":%q,"conditions":[{"type":"Ready","status":"False","reason":"PodCompleted"}],`+
		`"containerStatuses":[{"name":%q,"image":"busybox","imageID":"","ready":false,"restartCount":0,`+
		`"state":{"terminated":{"exitCode":%d,"reason":"Completed","startedAt":%q,"finishedAt":%q}}}]}}`, phase, container, exitCode, now, now)
}

func (s *jobSession) patchPodStatus(ns, pod, patch string) {
	_, _, _ = s.a.Kubectl(s.t, "", "-n", ns, "patch", "pod", pod, "--subresource=status", "--type=merge", "-p", patch)
}

// waitFor plays the kubelet until done says the Job is where it should be.
func (s *jobSession) waitFor(ns, name, what string, done func(*batchv1.Job) bool) {
	s.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		s.playKubelet(ns, name)
		if j, ok := s.job(ns, name); ok && done(j) {
			return
		}
	}
	j, _ := s.job(ns, name)
	s.t.Fatalf("job %s/%s: %s did not happen; status %+v\nevents:\n%s", ns, name, what, j.Status, s.events(ns, name, false))
}

func hasCondition(j *batchv1.Job, t batchv1.JobConditionType, status corev1.ConditionStatus) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == status {
			return true
		}
	}
	return false
}

func finished(j *batchv1.Job) bool {
	return hasCondition(j, batchv1.JobComplete, corev1.ConditionTrue) || hasCondition(j, batchv1.JobFailed, corev1.ConditionTrue)
}

var (
	uidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// normalize replaces uids and the random suffixes of job's pod names.
func normalize(job, s string) string {
	s = uidPattern.ReplaceAllString(s, "<uid>")
	return regexp.MustCompile(`\b(`+regexp.QuoteMeta(job)+`-(?:[0-9]+-)?)[a-z0-9]{5}\b`).ReplaceAllString(s, "${1}xxxxx")
}

// describeJob prints what the Job controller decides of a Job.
func describeJob(j *batchv1.Job) string {
	var b strings.Builder
	st := j.Status
	fmt.Fprintf(&b, "job %s: active=%d ready=%s terminating=%s succeeded=%d failed=%d startTime=%t completionTime=%t completedIndexes=%q failedIndexes=%s\n",
		j.Name, st.Active, ptrString(st.Ready), ptrString(st.Terminating), st.Succeeded, st.Failed, st.StartTime != nil, st.CompletionTime != nil,
		st.CompletedIndexes, ptrString(st.FailedIndexes))
	if u := st.UncountedTerminatedPods; u != nil {
		fmt.Fprintf(&b, "  uncounted: succeeded=%d failed=%d\n", len(u.Succeeded), len(u.Failed))
	}
	for _, c := range st.Conditions {
		fmt.Fprintf(&b, "  condition %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	return normalize(j.Name, b.String())
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}

// describePods prints the metadata the controller gives the Job's pods.
func describePods(job string, pods []corev1.Pod) string {
	var lines []string
	for _, p := range pods {
		refs := []string{}
		for _, r := range p.OwnerReferences {
			refs = append(refs, fmt.Sprintf("%s/%s %s controller=%s block=%s", r.APIVersion, r.Kind, r.Name, ptrString(r.Controller), ptrString(r.BlockOwnerDeletion)))
		}
		annotations := map[string]string{}
		for k, v := range p.Annotations {
			if k != podCompleteAnnotation {
				annotations[k] = v
			}
		}
		var env []string
		for _, e := range p.Spec.Containers[0].Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				env = append(env, e.Name+"="+e.ValueFrom.FieldRef.FieldPath)
			}
		}
		lines = append(lines, normalize(job, fmt.Sprintf("pod %s generateName=%s hostname=%q subdomain=%q\n  labels=%v\n  annotations=%v\n  finalizers=%v ownerReferences=%v env=%v\n",
			p.Name, p.GenerateName, p.Spec.Hostname, p.Spec.Subdomain, p.Labels, annotations, p.Finalizers, refs, env)))
	}
	sort.Strings(lines)
	return strings.Join(lines, "")
}

// events prints the Job's events, sorted (unique lines only when
// dedupe: retries repeat them as often as timing has it).
func (s *jobSession) events(ns, job string, dedupe bool) string {
	var list corev1.EventList
	if err := json.Unmarshal([]byte(s.kubectl(ns, "get", "events", "--field-selector", "involvedObject.kind=Job,involvedObject.name="+job, "-o", "json")), &list); err != nil {
		s.t.Fatal(err)
	}
	var lines []string
	for _, e := range list.Items {
		lines = append(lines, normalize(job, fmt.Sprintf("event %s %s %s: %s\n", e.Source.Component, e.Type, e.Reason,
			strings.TrimPrefix(e.Message, "(combined from similar events): "))))
	}
	sort.Strings(lines)
	if dedupe {
		lines = slices.Compact(lines)
	}
	return strings.Join(lines, "")
}

// snapshot describes the Job, its pods and its events under "## step",
// once the description has not changed for a second (events are written
// after what they tell of).
func (s *jobSession) snapshot(step, ns, name string, dedupeEvents bool) string {
	s.t.Helper()
	last, since := "", time.Now()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		cur := s.describe(ns, name, dedupeEvents)
		if cur != last {
			last, since = cur, time.Now()
		} else if time.Since(since) > time.Second {
			break
		}
	}
	return "## " + step + "\n" + last
}

func (s *jobSession) describe(ns, name string, dedupeEvents bool) string {
	j, ok := s.job(ns, name)
	out := "job " + name + " gone\n"
	if ok {
		out = describeJob(j)
	}
	return out + describePods(name, s.pods(ns, name)) + s.events(ns, name, dedupeEvents)
}

// finishPod waits for a pod of the Job (of the completion index, unless
// ""; running, on admitd's simulated nodes) and writes it finished with
// phase and exitCode, as its kubelet would.
func (s *jobSession) finishPod(ns, job, index, phase string, exitCode int) {
	s.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, p := range s.pods(ns, job) {
			if p.DeletionTimestamp != nil || (index != "" && p.Annotations[batchv1.JobCompletionIndexAnnotation] != index) {
				continue
			}
			if p.Status.Phase == corev1.PodRunning || (s.record && p.Status.Phase == corev1.PodPending) {
				s.patchPodStatus(ns, p.Name, finishedPodStatus(p.Spec.Containers[0].Name, phase, exitCode))
				return
			}
		}
	}
	s.t.Fatalf("job %s/%s has no running pod of index %q", ns, job, index)
}

func (s *jobSession) failPod(ns, job string) { s.finishPod(ns, job, "", "Failed", 1) }

// replacementDelay fails the Job's pod and returns how long the
// controller took to create the next one (the backoff counts from the
// container's finishedAt, written to the second: up to 1s less).
func (s *jobSession) replacementDelay(ns, job string) time.Duration {
	s.t.Helper()
	s.failPod(ns, job)
	failed := time.Now()
	for deadline := failed.Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if len(s.pods(ns, job)) > 1 {
			return time.Since(failed)
		}
	}
	s.t.Fatalf("job %s/%s: no replacement for its failed pod", ns, job)
	return 0
}

// run is the session: a Job of 5 completions 2 at a time, one of 4 whose
// pods keep running (active and ready counted, one finished by hand and
// replaced), an Indexed
// Job, a Job whose only pod fails (backoffLimit 0), one whose two pods
// fail (backoffLimit 1, the second created after the 10s backoff), a pod
// failure policy's FailJob, an Indexed Job's success policy and
// backoffLimitPerIndex, one past its activeDeadlineSeconds, one created suspended and resumed, one deleted by
// its ttlSecondsAfterFinished, and one whose pods PodSecurity refuses.
func (s *jobSession) run() string {
	var got []string
	s.createNamespace("jobs")
	s.createJob("jobs", "pi.yaml")
	s.waitFor("jobs", "pi", "Complete", finished)
	got = append(got, s.snapshot("5 completions, parallelism 2", "jobs", "pi", false))

	s.createJob("jobs", "running.yaml")
	s.waitFor("jobs", "running", "2 pods running and ready", func(j *batchv1.Job) bool { return j.Status.Active == 2 && ptr.Deref(j.Status.Ready, 0) == 2 })
	got = append(got, s.snapshot("2 of 4 running", "jobs", "running", false))
	s.finishPod("jobs", "running", "", "Succeeded", 0)
	s.waitFor("jobs", "running", "a replacement running", func(j *batchv1.Job) bool {
		return j.Status.Succeeded == 1 && j.Status.Active == 2 && ptr.Deref(j.Status.Ready, 0) == 2
	})
	got = append(got, s.snapshot("1 of 4 succeeded, 2 running", "jobs", "running", false))

	s.createJob("jobs", "idx.yaml")
	s.waitFor("jobs", "idx", "Complete", finished)
	got = append(got, s.snapshot("indexed", "jobs", "idx", false))

	s.createJob("jobs", "fail.yaml")
	s.failPod("jobs", "fail")
	s.waitFor("jobs", "fail", "Failed", finished)
	got = append(got, s.snapshot("backoffLimit 0, pod failed", "jobs", "fail", false))

	s.createJob("jobs", "backoff.yaml")
	delay := s.replacementDelay("jobs", "backoff")
	s.t.Logf("failed pod replaced after %v", delay)
	s.failPod("jobs", "backoff")
	s.waitFor("jobs", "backoff", "Failed", finished)
	got = append(got, s.snapshot("backoffLimit 1, two pods failed", "jobs", "backoff", false),
		fmt.Sprintf("replaced after the 10s backoff: %t\n", delay > 8*time.Second && delay < 30*time.Second))

	s.createJob("jobs", "pfp.yaml")
	s.finishPod("jobs", "pfp", "", "Failed", 42)
	s.waitFor("jobs", "pfp", "Failed", finished)
	got = append(got, s.snapshot("podFailurePolicy FailJob on exit code 42", "jobs", "pfp", false))

	s.createJob("jobs", "leader.yaml")
	s.finishPod("jobs", "leader", "0", "Succeeded", 0)
	s.waitFor("jobs", "leader", "Complete", finished)
	got = append(got, s.snapshot("successPolicy: index 0 succeeded", "jobs", "leader", false))

	s.createJob("jobs", "perindex.yaml")
	s.finishPod("jobs", "perindex", "0", "Succeeded", 0)
	s.finishPod("jobs", "perindex", "1", "Failed", 1)
	s.waitFor("jobs", "perindex", "Failed", finished)
	got = append(got, s.snapshot("backoffLimitPerIndex 0: index 1 failed", "jobs", "perindex", false))

	s.createJob("jobs", "deadline.yaml")
	s.waitFor("jobs", "deadline", "Failed", finished)
	got = append(got, s.snapshot("activeDeadlineSeconds", "jobs", "deadline", false))

	s.createJob("jobs", "suspended.yaml")
	s.waitFor("jobs", "suspended", "Suspended", func(j *batchv1.Job) bool { return hasCondition(j, batchv1.JobSuspended, corev1.ConditionTrue) })
	got = append(got, s.snapshot("created suspended", "jobs", "suspended", false))
	s.kubectl("jobs", "patch", "job", "suspended", "--type=merge", "-p", `{"spec":{"suspend":false}}`)
	s.waitFor("jobs", "suspended", "Complete", finished)
	got = append(got, s.snapshot("resumed", "jobs", "suspended", false))

	s.createJob("jobs", "ttl.yaml")
	s.waitFor("jobs", "ttl", "Complete", finished)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if _, ok := s.job("jobs", "ttl"); !ok {
			break
		}
	}
	got = append(got, "## ttlSecondsAfterFinished\n"+s.kubectl("jobs", "get", "jobs", "-o", "name"))

	s.createNamespace("restricted", "pod-security.kubernetes.io/enforce=restricted")
	s.createJob("restricted", "restricted.yaml")
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if strings.Contains(s.events("restricted", "priv", true), "FailedCreate") {
			break
		}
	}
	time.Sleep(time.Second)
	got = append(got, s.snapshot("PodSecurity refuses the pods", "restricted", "priv", true))
	return strings.Join(got, "")
}

// The same Jobs created with kubectl against admitd (with simulated
// nodes) and against kube-apiserver + kube-controller-manager 1.37.2
// (recorded in testdata/job, the test playing the kubelet) end with the
// same status, conditions, pod metadata and events.
//
// With KAS_KUBECONFIG set, the session runs against that server (fresh,
// with KCM=1) and rewrites the transcript.
func TestJobSessionMatchesKCM(t *testing.T) {
	t.Parallel() // much of it waits out pod backoffs: it runs beside the CronJob session
	s := &jobSession{t: t}
	if record := os.Getenv("KAS_KUBECONFIG"); record != "" {
		s.a, s.record = &admitd{Kubeconfig: record}, true
	} else {
		s.a = startAdmitd(t, t.TempDir(), "--simulated-nodes=2")
	}
	harness.RecordOrCompare(t, s.record, jobTranscript, s.run())

}
