package cronjob

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/kubernetes/pkg/util/parsers"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/cronjob"
)

var zones = []string{"", "UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Europe/London", "Pacific/Chatham", "Not/AZone"}

// field is one random cron field between lo and hi: *, a value, a range,
// a step, a list, or (for months and days of week) a name.
func field(r *rand.Rand, lo, hi int, names []string) string {
	v := func() int { return lo + r.IntN(hi-lo+1) }
	switch r.IntN(9) {
	case 0, 1:
		return "*"
	case 2:
		return fmt.Sprintf("*/%d", 1+r.IntN(hi-lo+1))
	case 3:
		a, b := v(), v()
		return fmt.Sprintf("%d-%d", min(a, b), max(a, b))
	case 4:
		a, b := v(), v()
		return fmt.Sprintf("%d-%d/%d", min(a, b), max(a, b), 1+r.IntN(5))
	case 5:
		return fmt.Sprintf("%d,%d", v(), v())
	case 6:
		if names != nil {
			return names[r.IntN(len(names))]
		}
		return fmt.Sprint(v())
	case 7:
		return "?"
	default:
		return fmt.Sprint(v())
	}
}

// schedule is a random schedule: five fields (sometimes out of range or
// with a TZ prefix), or a descriptor.
func schedule(r *rand.Rand) string {
	switch r.IntN(12) {
	case 0:
		return []string{"@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually", "@reboot", "@every"}[r.IntN(9)]
	case 1:
		return fmt.Sprintf("@every %s", []string{"1m", "90s", "1h30m", "25m", "7h", "0.5s", "2s", "-1m", "1d"}[r.IntN(9)])
	case 2:
		return []string{"59 23 31 2 *", "0 0 30 2 *", "0 0 31 4,6 *", "30 6-16/4 * * 1-5", "TZ=UTC */5 * * * *", "CRON_TZ=Asia/Tokyo 0 9 * * *", "* * * *", "60 * * * *", "0 24 * * *", "", "*/0 * * * *"}[r.IntN(11)]
	}
	return strings.Join([]string{field(r, 0, 59, nil), field(r, 0, 23, nil), field(r, 1, 31, nil),
		field(r, 1, 12, []string{"jan", "FEB", "dec"}), field(r, 0, 6, []string{"sun", "MON", "sat"})}, " ")
}

// cronJob is a random CronJob created at a random time, with or without
// a last schedule time, time zone and starting deadline.
func cronJob(r *rand.Rand) *batchv1.CronJob {
	created := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(int64(6 * 365 * 24 * time.Hour)))).Truncate(time.Second)
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cj%d", r.IntN(1000)), Namespace: "ns", UID: types.UID(fmt.Sprint(r.Int())),
		CreationTimestamp: metav1.Time{Time: created}},
		Spec: batchv1.CronJobSpec{Schedule: schedule(r), JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
			Spec:       batchv1.JobSpec{Parallelism: ptr.To[int32](2)}}}}
	if r.IntN(3) == 0 {
		cj.Spec.JobTemplate.Annotations = map[string]string{"x": "y", batchv1.CronJobScheduledTimestampAnnotation: "kept?"}
	}
	if z := zones[r.IntN(len(zones))]; z != "" || r.IntN(2) == 0 {
		if z != "" {
			cj.Spec.TimeZone = ptr.To(z)
		}
	}
	if r.IntN(2) == 0 {
		last := created.Add(time.Duration(r.Int64N(int64(30 * 24 * time.Hour)))).Truncate(time.Minute)
		cj.Status.LastScheduleTime = &metav1.Time{Time: last}
	}
	if r.IntN(2) == 0 {
		cj.Spec.StartingDeadlineSeconds = ptr.To(r.Int64N(10000))
	}
	return cj
}

// now is a random time after the CronJob's creation: seconds, hours or
// years later (or a little before).
func now(r *rand.Rand, cj *batchv1.CronJob) time.Time {
	spans := []time.Duration{90 * time.Second, time.Hour, 48 * time.Hour, 400 * 24 * time.Hour, 3 * 365 * 24 * time.Hour}
	return cj.CreationTimestamp.Add(time.Duration(r.Int64N(int64(spans[r.IntN(len(spans))]))) - time.Minute + time.Duration(r.IntN(1000))*time.Millisecond)
}

func drain(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func show(t *time.Time) string {
	if t == nil {
		return "nil"
	}
	return t.String()
}

// Random CronJobs at random times: the schedule text (with its
// UnsupportedSchedule event), its parse, the most recent start time with
// and without the deadline (time counted from, start time, missed count,
// error), the start time to act on (with TooManyMissedTimes), the
// requeue wait, the Job name and the Job made from the template are
// upstream's.
func TestSchedulesMatchUpstream(t *testing.T) {
	const n = 20000
	r := rand.New(rand.NewPCG(1, 37))
	mismatches, parsed, started, many := 0, 0, 0, 0
	report := func(i int, cj *batchv1.CronJob, at time.Time, what string, got, want any) {
		mismatches++
		if mismatches <= 20 {
			t.Errorf("case %d (schedule %q, zone %v, created %s, last %v, deadline %v, now %s): %s = %v, want upstream's %v",
				i, cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, "-"), cj.CreationTimestamp, cj.Status.LastScheduleTime, ptr.Deref(cj.Spec.StartingDeadlineSeconds, -1), at, what, got, want)
		}
	}
	for i := range n {
		cj := cronJob(r)
		at := now(r, cj)
		ours, theirs := record.NewFakeRecorder(10), record.NewFakeRecorder(10)
		spec, wantSpec := cronjob.ScheduleSpec(cj, ours), upstreamFormatSchedule(cj, theirs)
		if spec != wantSpec || !reflect.DeepEqual(drain(ours), drain(theirs)) {
			report(i, cj, at, "ScheduleSpec", spec, wantSpec)
		}
		sched, err := cronjob.ParseSchedule(spec)
		wantSched, wantErr := parsers.ParseCronScheduleWithPanicRecovery(spec)
		if errText(err) != errText(wantErr) {
			report(i, cj, at, "ParseSchedule error", err, wantErr)
		}
		if err != nil || wantErr != nil {
			continue
		}
		parsed++
		compareSchedule(cj, at, sched, wantSched, func(what string, got, want any) { report(i, cj, at, what, got, want) })
		ours, theirs = record.NewFakeRecorder(10), record.NewFakeRecorder(10)
		next, err := cronjob.NextScheduleTime(cj, at, sched, ours)
		wantNext, wantErr := upstreamNextScheduleTime(logr.Discard(), cj, at, wantSched, theirs)
		if show(next) != show(wantNext) || errText(err) != errText(wantErr) {
			report(i, cj, at, "NextScheduleTime", show(next)+" "+errText(err), show(wantNext)+" "+errText(wantErr))
		}
		if evs, want := drain(ours), drain(theirs); !reflect.DeepEqual(evs, want) {
			report(i, cj, at, "NextScheduleTime events", evs, want)
		} else if len(evs) > 0 {
			many++
		}
		if next != nil {
			started++
			compareJob(cj, *next, func(what string, got, want any) { report(i, cj, at, what, got, want) })
		}
	}
	t.Logf("%d CronJobs: %d schedules parsed, %d with a start time, %d with too many missed; %d mismatches", n, parsed, started, many, mismatches)
	if parsed < n/3 || started < n/20 || many < 100 {
		t.Errorf("generated cases cover too little: %d parsed, %d started, %d too many missed", parsed, started, many)
	}
}

func compareSchedule(cj *batchv1.CronJob, at time.Time, sched, wantSched cron.Schedule, report func(string, any, any)) {
	for _, withDeadline := range []bool{false, true} {
		earliest, latest, missed, err := cronjob.MostRecentScheduleTime(cj, at, sched, withDeadline)
		wEarliest, wLatest, wMissed, wErr := upstreamMostRecentScheduleTime(cj, at, wantSched, withDeadline)
		got := fmt.Sprintf("%s %s %d %s", earliest, show(latest), int(missed), errText(err))
		want := fmt.Sprintf("%s %s %d %s", wEarliest, show(wLatest), wMissed, errText(wErr))
		if got != want {
			report(fmt.Sprintf("MostRecentScheduleTime(deadline %v)", withDeadline), got, want)
		}
	}
	if got, want := cronjob.RequeueAfter(cj, at, sched), *upstreamNextScheduleTimeDuration(cj, at, wantSched); got != want {
		report("RequeueAfter", got, want)
	}
}

func compareJob(cj *batchv1.CronJob, scheduled time.Time, report func(string, any, any)) {
	if got, want := cronjob.JobName(cj, scheduled), upstreamGetJobName(cj, scheduled); got != want {
		report("JobName", got, want)
	}
	job, err := cronjob.JobFromTemplate(cj, scheduled)
	want, wantErr := upstreamGetJobFromTemplate2(cj, scheduled)
	if errText(err) != errText(wantErr) || !reflect.DeepEqual(job, want) {
		report("JobFromTemplate", fmt.Sprintf("%+v %v", job, err), fmt.Sprintf("%+v %v", want, wantErr))
	}
}

// Finished Jobs go in upstream's order: by start time, those not started
// last, then by name.
func TestOldestFirstMatchesUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 37))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mismatches := 0
	for range 20000 {
		var jobs []*batchv1.Job
		for range 2 {
			j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("j%d", r.IntN(3))}}
			if r.IntN(3) > 0 {
				j.Status.StartTime = &metav1.Time{Time: base.Add(time.Duration(r.IntN(3)) * time.Second)}
			}
			jobs = append(jobs, j)
		}
		got, want := cronjob.OldestFirst(jobs[0], jobs[1]) < 0, upstreamByJobStartTimeLess(jobs, 0, 1)
		if got != want {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("OldestFirst(%s %v, %s %v) < 0 = %v, want upstream's Less %v", jobs[0].Name, jobs[0].Status.StartTime, jobs[1].Name, jobs[1].Status.StartTime, got, want)
			}
		}
	}
}
