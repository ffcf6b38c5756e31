package cronjob

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// Missed says how many start times a CronJob let pass since its last
// schedule: none, a few, or more than 100 (too many to start them all).
type Missed int

// The Missed values.
const (
	NoneMissed Missed = iota
	FewMissed
	ManyMissed
)

// tooManyMissed is the count past which the controller warns that it
// will not start every missed time (kcm's "more than 80 hourly Jobs over
// a weekend, but less than lots").
const tooManyMissed = 100

// requeuePadding is added to the wait until the next start time, so a
// clock a little behind the apiserver's does not wake the CronJob just
// before its time.
const requeuePadding = 100 * time.Millisecond

// ScheduleSpec is the schedule the controller parses: spec.schedule,
// with spec.timeZone as a TZ= prefix when it names a known zone. A
// schedule that has a TZ of its own (validation refuses new ones; older
// objects may keep theirs) is used as it is, and recorder, if not nil,
// warns that it is not supported.
func ScheduleSpec(cj *batchv1.CronJob, recorder record.EventRecorder) string {
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		if recorder != nil {
			recorder.Eventf(cj, corev1.EventTypeWarning, "UnsupportedSchedule",
				"CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", cj.Spec.Schedule)
		}
		return cj.Spec.Schedule
	}
	if cj.Spec.TimeZone == nil {
		return cj.Spec.Schedule
	}
	if _, err := time.LoadLocation(*cj.Spec.TimeZone); err != nil {
		return cj.Spec.Schedule
	}
	return "TZ=" + *cj.Spec.TimeZone + " " + cj.Spec.Schedule
}

// ParseSchedule parses a schedule as kcm does: robfig/cron's standard
// five fields or descriptor, a panic of the library (it has some on
// odd input) reported as an error.
func ParseSchedule(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	return cron.ParseStandard(spec)
}

// MostRecentScheduleTime looks for the latest start time of cj at or
// before now that is after its last schedule (or its creation), and
// after now minus startingDeadlineSeconds when withDeadline. It returns
// the time it counted from, that start time (nil if there is none) and
// how many were missed. A schedule that parses but never comes round
// (the 31st of February) is an error.
func MostRecentScheduleTime(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, withDeadline bool) (time.Time, *time.Time, Missed, error) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if withDeadline && cj.Spec.StartingDeadlineSeconds != nil {
		if deadline := now.Add(-time.Duration(*cj.Spec.StartingDeadlineSeconds) * time.Second); deadline.After(earliest) {
			earliest = deadline
		}
	}
	first := sched.Next(earliest)
	second := sched.Next(first)
	if now.Before(first) {
		return earliest, nil, NoneMissed, nil
	}
	if now.Before(second) {
		return earliest, &first, NoneMissed, nil
	}
	period := int64(second.Sub(first).Round(time.Second).Seconds())
	if period < 1 {
		return earliest, nil, NoneMissed, fmt.Errorf("time difference between two schedules is less than 1 second")
	}
	// The count is an estimate, the first gap taken as the period; the
	// walk to the latest time starts one period before the estimate, so
	// irregular schedules (30 6-16/4 * * 1-5) are walked by the library.
	count := int64(now.Sub(first).Seconds())/period + 1
	from := first.Add(time.Duration((count-2)*period) * time.Second)
	var latest time.Time
	for t := sched.Next(from); !t.After(now); t = sched.Next(t) {
		latest = t
	}
	missed := FewMissed
	if count > tooManyMissed {
		missed = ManyMissed
	}
	if latest.IsZero() {
		return earliest, nil, missed, nil
	}
	return earliest, &latest, missed, nil
}

// NextScheduleTime is the start time cj has to act on now, or nil; with
// more than 100 missed, recorder hears a TooManyMissedTimes warning.
func NextScheduleTime(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, recorder record.EventRecorder) (*time.Time, error) {
	_, latest, missed, err := MostRecentScheduleTime(cj, now, sched, true)
	if latest == nil || latest.After(now) {
		return nil, err
	}
	if missed == ManyMissed {
		recorder.Eventf(cj, corev1.EventTypeWarning, "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
	}
	return latest, err
}

// RequeueAfter is how long until cj's next start time after now (plus
// a little padding), ignoring its starting deadline.
func RequeueAfter(cj *batchv1.CronJob, now time.Time, sched cron.Schedule) time.Duration {
	earliest, latest, missed, err := MostRecentScheduleTime(cj, now, sched, false)
	from := now
	switch {
	case err != nil:
	case latest != nil:
		from = *latest
	case missed == NoneMissed:
		from = earliest
	}
	return sched.Next(from).Add(requeuePadding).Sub(now)
}
