package cronjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/controllertest"
	"github.com/admitd/admitd/pkg/admission"
)

// env is an in-process API server over memory storage running the
// CronJob controller on a fake clock, with an admin client. Its
// admission refuses Jobs whose name starts with "refused-".
type env struct {
	t     *testing.T
	admin kubernetes.Interface
	clock *clocktesting.FakeClock
	ctrl  *Controller
}

// refuseJobs is an admission plugin refusing the creation of Jobs named
// refused-*.
type refuseJobs struct{}

func (refuseJobs) Handles(op admission.Operation) bool { return op == admission.Create }
func (refuseJobs) Validate(_ context.Context, a *admission.Attributes) error {
	if a.Resource.Resource == "jobs" && strings.HasPrefix(a.Name, "refused-") {
		return admission.NewForbidden(a, errors.New("no jobs here"))
	}
	return nil
}

func start(t *testing.T) *env {
	t.Helper()
	s := controllertest.Start(t, admission.NamedPlugin{Name: "RefuseJobs", Plugin: refuseJobs{}})
	client, recorder := s.Controller(User, Component)
	// The fake clock starts at the real time, which stamps the CronJobs'
	// creation: away from the end of a minute, so they are created in the
	// minute the clock shows.
	if sec := time.Now().Second(); sec >= 55 {
		time.Sleep(time.Duration(61-sec) * time.Second)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return &env{t: t, admin: s.Admin, clock: clk, ctrl: c}
}

func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, what, cond)
}

// stepToNextMinute moves the fake clock to 1 s past the next minute,
// and returns that minute.
func (e *env) stepToNextMinute() time.Time {
	next := e.clock.Now().Truncate(time.Minute).Add(time.Minute)
	// The server stamps creationTimestamp with the real clock, and a
	// schedule time counts only after it: near a minute's end, the next
	// minute could be a CronJob's own creation second (a CI flake).
	for !next.After(time.Now().Add(2 * time.Second)) {
		next = next.Add(time.Minute)
	}
	e.clock.SetTime(next.Add(time.Second))
	return next
}

func cronJob(name, schedule string) *batchv1.CronJob {
	return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.CronJobSpec{
		Schedule: schedule,
		JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}, Annotations: map[string]string{"note": "x"}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}
}

func (e *env) create(cj *batchv1.CronJob) *batchv1.CronJob {
	e.t.Helper()
	got, err := e.admin.BatchV1().CronJobs("default").Create(context.Background(), cj, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// jobNames are the names of the Jobs, sorted.
func (e *env) jobNames() []string {
	list, err := e.admin.BatchV1().Jobs("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, j := range list.Items {
		if j.DeletionTimestamp == nil {
			names = append(names, j.Name)
		}
	}
	slices.Sort(names)
	return names
}

func (e *env) waitJobs(want ...string) {
	e.t.Helper()
	slices.Sort(want)
	e.eventually(fmt.Sprintf("jobs %v", want), func() (bool, string) {
		got := e.jobNames()
		return slices.Equal(got, want), fmt.Sprintf("jobs %v", got)
	})
}

// events are "reason: message" of the events about the CronJob.
func (e *env) events(cronJob string) []string {
	list, err := e.admin.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind == "CronJob" && ev.InvolvedObject.Name == cronJob {
			out = append(out, ev.Reason+": "+ev.Message)
		}
	}
	slices.Sort(out)
	return out
}

func (e *env) waitEvent(cronJob, want string) {
	e.t.Helper()
	e.eventually("event "+want, func() (bool, string) {
		got := e.events(cronJob)
		return slices.Contains(got, want), fmt.Sprintf("events %q", got)
	})
}

func (e *env) cronJob(name string) *batchv1.CronJob {
	e.t.Helper()
	cj, err := e.admin.BatchV1().CronJobs("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return cj
}

// finish marks a Job finished as the Job controller would, Complete or
// Failed, at the time given.
func (e *env) finish(name string, cond batchv1.JobConditionType, at time.Time) {
	e.t.Helper()
	ts := at.UTC().Format(time.RFC3339)
	first, counts := "SuccessCriteriaMet", `"succeeded":1`
	if cond == batchv1.JobFailed {
		first, counts = "FailureTarget", `"failed":1`
	}
	patch := fmt.Sprintf(`{"status":{"startTime":%q,%s,"conditions":[{"type":%q,"status":"True","lastTransitionTime":%q},{"type":%q,"status":"True","lastTransitionTime":%q}]}}`,
		ts, counts, first, ts, cond, ts)
	if cond == batchv1.JobComplete {
		patch = strings.Replace(patch, `"status":{`, fmt.Sprintf(`"status":{"completionTime":%q,`, ts), 1)
	}
	if _, err := e.admin.BatchV1().Jobs("default").Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		e.t.Fatalf("finishing %s: %v", name, err)
	}
}

// A start time makes the Job <cronjob>-<minutes since the epoch> from
// the template, annotated with the start time, controlled by the
// CronJob, in status.active with lastScheduleTime; its completion takes
// it out (SawCompletedJob) and sets lastSuccessfulTime.
func TestStartsAJobAtEachStartTime(t *testing.T) {
	e := start(t)
	cj := e.create(cronJob("hello", "*/1 * * * *"))
	at := e.stepToNextMinute()
	name := fmt.Sprintf("hello-%d", at.Unix()/60)
	e.waitJobs(name)
	e.waitEvent("hello", "SuccessfulCreate: Created job "+name)
	job, err := e.admin.BatchV1().Jobs("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := job.Annotations[batchv1.CronJobScheduledTimestampAnnotation], at.UTC().Format(time.RFC3339); got != want {
		t.Errorf("scheduled-timestamp annotation = %q, want %q", got, want)
	}
	if job.Labels["app"] != "hello" || job.Annotations["note"] != "x" {
		t.Errorf("job labels %v annotations %v, want the template's", job.Labels, job.Annotations)
	}
	ref := metav1.GetControllerOf(job)
	if ref == nil || ref.UID != cj.UID || ref.Kind != "CronJob" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("job controller = %+v, want the CronJob with blockOwnerDeletion", ref)
	}
	e.eventually("status.active", func() (bool, string) {
		st := e.cronJob("hello").Status
		ok := len(st.Active) == 1 && st.Active[0].Name == name && st.Active[0].UID == job.UID && st.Active[0].Kind == "Job" &&
			st.Active[0].APIVersion == "batch/v1" && st.LastScheduleTime != nil && st.LastScheduleTime.Time.Equal(at)
		return ok, fmt.Sprintf("status %+v", st)
	})
	done := e.clock.Now().Truncate(time.Second)
	e.finish(name, batchv1.JobComplete, done)
	e.waitEvent("hello", "SawCompletedJob: Saw completed job: "+name+", condition: Complete")
	e.eventually("lastSuccessfulTime", func() (bool, string) {
		st := e.cronJob("hello").Status
		return len(st.Active) == 0 && st.LastSuccessfulTime != nil && st.LastSuccessfulTime.Time.Equal(done), fmt.Sprintf("status %+v", st)
	})
	next := e.stepToNextMinute()
	e.waitJobs(name, fmt.Sprintf("hello-%d", next.Unix()/60))
}

// Forbid skips a start while a Job runs (JobAlreadyActive); Replace
// deletes the running Job and starts the new one.
func TestConcurrencyPolicies(t *testing.T) {
	e := start(t)
	forbid, replace := cronJob("forbid", "*/1 * * * *"), cronJob("replace", "*/1 * * * *")
	forbid.Spec.ConcurrencyPolicy, replace.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent
	e.create(forbid)
	e.create(replace)
	first := e.stepToNextMinute()
	f1, r1 := fmt.Sprintf("forbid-%d", first.Unix()/60), fmt.Sprintf("replace-%d", first.Unix()/60)
	e.waitJobs(f1, r1)
	e.eventually("both active", func() (bool, string) {
		a, b := e.cronJob("forbid").Status.Active, e.cronJob("replace").Status.Active
		return len(a) == 1 && len(b) == 1, fmt.Sprintf("active %v %v", a, b)
	})
	second := e.stepToNextMinute()
	r2 := fmt.Sprintf("replace-%d", second.Unix()/60)
	e.waitJobs(f1, r2)
	e.waitEvent("forbid", "JobAlreadyActive: Not starting job because prior execution is running and concurrency policy is Forbid")
	e.waitEvent("replace", "SuccessfulDelete: Deleted job "+r1)
	e.eventually("replace's active", func() (bool, string) {
		a := e.cronJob("replace").Status.Active
		return len(a) == 1 && a[0].Name == r2, fmt.Sprintf("active %v", a)
	})
}

// A suspended CronJob starts nothing; one whose start time is older than
// startingDeadlineSeconds starts nothing either (the next one it does).
func TestSuspendAndStartingDeadline(t *testing.T) {
	e := start(t)
	suspended, late := cronJob("suspended", "*/1 * * * *"), cronJob("late", "*/1 * * * *")
	suspended.Spec.Suspend = ptr.To(true)
	late.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
	e.create(suspended)
	e.create(late)
	next := e.clock.Now().Truncate(time.Minute).Add(time.Minute)
	e.clock.SetTime(next.Add(30 * time.Second))
	time.Sleep(300 * time.Millisecond)
	if got := e.jobNames(); len(got) != 0 {
		t.Errorf("jobs %v, want none (suspended, and a start 30s late with a 10s deadline)", got)
	}
	// Resumed, it starts the start time it missed (it has no deadline),
	// and the next one.
	if _, err := e.admin.BatchV1().CronJobs("default").Patch(context.Background(), "suspended", types.MergePatchType,
		[]byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	missed := fmt.Sprintf("suspended-%d", next.Unix()/60)
	e.waitJobs(missed)
	at := e.stepToNextMinute()
	e.waitJobs(fmt.Sprintf("late-%d", at.Unix()/60), missed, fmt.Sprintf("suspended-%d", at.Unix()/60))
}

// More than 100 missed start times are a TooManyMissedTimes warning; the
// latest of them is started.
func TestTooManyMissedStartTimes(t *testing.T) {
	e := start(t)
	cj := cronJob("missed", "*/1 * * * *")
	cj.Spec.Suspend = ptr.To(true)
	e.create(cj)
	got := e.cronJob("missed")
	got.Status.LastScheduleTime = &metav1.Time{Time: e.clock.Now().Add(-3 * time.Hour).Truncate(time.Minute)}
	if _, err := e.admin.BatchV1().CronJobs("default").UpdateStatus(context.Background(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.BatchV1().CronJobs("default").Patch(context.Background(), "missed", types.MergePatchType,
		[]byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	latest := e.clock.Now().Truncate(time.Minute)
	e.waitEvent("missed", "TooManyMissedTimes: too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
	e.waitJobs(fmt.Sprintf("missed-%d", latest.Unix()/60))
}

// Finished Jobs beyond the history limits go, oldest first.
func TestHistoryLimits(t *testing.T) {
	e := start(t)
	cj := e.create(cronJob("hist", "0 0 1 1 *"))
	base := e.clock.Now().Truncate(time.Second)
	for i, cond := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobComplete, batchv1.JobComplete, batchv1.JobFailed, batchv1.JobFailed} {
		name := fmt.Sprintf("hist-%d", i)
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, controllerKind)}},
			Spec: cj.Spec.JobTemplate.Spec}
		if _, err := e.admin.BatchV1().Jobs("default").Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.finish(name, cond, base.Add(time.Duration(i)*time.Minute))
	}
	if _, err := e.admin.BatchV1().CronJobs("default").Patch(context.Background(), "hist", types.MergePatchType,
		[]byte(`{"spec":{"successfulJobsHistoryLimit":1,"failedJobsHistoryLimit":0}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitJobs("hist-2")
	for _, gone := range []string{"hist-0", "hist-1", "hist-3", "hist-4"} {
		e.waitEvent("hist", "SuccessfulDelete: Deleted job "+gone)
	}
}

// A running Job the CronJob controls but did not start is an
// UnexpectedJob; a refused create is a FailedCreate with the admission
// error; spec.timeZone sets the zone of the schedule and of the
// annotation.
func TestUnexpectedJobFailedCreateAndTimeZone(t *testing.T) {
	e := start(t)
	cj := e.create(cronJob("hello", "0 0 1 1 *"))
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "manual", OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, controllerKind)}},
		Spec: cj.Spec.JobTemplate.Spec}
	if _, err := e.admin.BatchV1().Jobs("default").Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitEvent("hello", "UnexpectedJob: Saw a job that the controller did not create or forgot: manual")

	e.create(cronJob("refused-a", "*/1 * * * *"))
	zoned := cronJob("zoned", "*/1 * * * *")
	zoned.Spec.TimeZone = ptr.To("Asia/Kolkata")
	e.create(zoned)
	at := e.stepToNextMinute()
	refused := fmt.Sprintf("refused-a-%d", at.Unix()/60)
	e.waitEvent("refused-a", fmt.Sprintf(`FailedCreate: Error creating job: jobs.batch %q is forbidden: no jobs here`, refused))
	name := fmt.Sprintf("zoned-%d", at.Unix()/60)
	e.waitJobs("manual", name)
	j, err := e.admin.BatchV1().Jobs("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kolkata, _ := time.LoadLocation("Asia/Kolkata")
	if got, want := j.Annotations[batchv1.CronJobScheduledTimestampAnnotation], at.In(kolkata).Format(time.RFC3339); got != want || !strings.HasSuffix(got, "+05:30") {
		t.Errorf("scheduled-timestamp annotation = %q, want %q", got, want)
	}
}

// A sync tells when to look again as a time, not as a wait from the clock
// it read: processNext counts the wait from the clock as it is when it
// queues the CronJob, so that a clock stepped during the sync does not
// push the next start a whole wait later (a CI flake of
// TestConcurrencyPolicies: forbid's Job never came).
func TestSyncTellsTheNextStartAsATime(t *testing.T) {
	e := start(t)
	e.create(cronJob("every-minute", "*/1 * * * *"))
	e.eventually("the CronJob in the controller's cache", func() (bool, string) {
		_, ok := e.ctrl.cronJobs.Get("default", "every-minute")
		return ok, "not yet"
	})
	want := e.clock.Now().Truncate(time.Minute).Add(time.Minute).Add(requeuePadding)
	for _, step := range []time.Duration{0, 20 * time.Second} {
		e.clock.Step(step)
		if !e.clock.Now().Before(want) {
			t.Skip("the clock reached the next minute")
		}
		at, err := e.ctrl.sync(context.Background(), "default/every-minute")
		if err != nil || at == nil || !at.Equal(want) {
			t.Fatalf("after a %v step: sync = %v, %v; want %v", step, at, err, want)
		}
	}
}
