// Package cronjob compares admitd's CronJob controller
// (internal/controllers/cronjob) with upstream's pkg/controller/cronjob.
// Upstream's schedule and naming functions are unexported: upstream.go
// reaches them by go:linkname, so the comparison runs upstream's own
// compiled code.
package cronjob

import (
	"time"
	_ "unsafe" // go:linkname

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	_ "k8s.io/kubernetes/pkg/controller/cronjob" // the functions below
)

//go:linkname upstreamMostRecentScheduleTime k8s.io/kubernetes/pkg/controller/cronjob.mostRecentScheduleTime
func upstreamMostRecentScheduleTime(cj *batchv1.CronJob, now time.Time, schedule cron.Schedule, includeStartingDeadlineSeconds bool) (time.Time, *time.Time, int, error)

//go:linkname upstreamNextScheduleTimeDuration k8s.io/kubernetes/pkg/controller/cronjob.nextScheduleTimeDuration
func upstreamNextScheduleTimeDuration(cj *batchv1.CronJob, now time.Time, schedule cron.Schedule) *time.Duration

//go:linkname upstreamNextScheduleTime k8s.io/kubernetes/pkg/controller/cronjob.nextScheduleTime
func upstreamNextScheduleTime(logger klog.Logger, cj *batchv1.CronJob, now time.Time, schedule cron.Schedule, recorder record.EventRecorder) (*time.Time, error)

//go:linkname upstreamGetJobFromTemplate2 k8s.io/kubernetes/pkg/controller/cronjob.getJobFromTemplate2
func upstreamGetJobFromTemplate2(cj *batchv1.CronJob, scheduledTime time.Time) (*batchv1.Job, error)

//go:linkname upstreamGetJobName k8s.io/kubernetes/pkg/controller/cronjob.getJobName
func upstreamGetJobName(cj *batchv1.CronJob, scheduledTime time.Time) string

//go:linkname upstreamFormatSchedule k8s.io/kubernetes/pkg/controller/cronjob.formatSchedule
func upstreamFormatSchedule(cj *batchv1.CronJob, recorder record.EventRecorder) string

//go:linkname upstreamByJobStartTimeLess k8s.io/kubernetes/pkg/controller/cronjob.byJobStartTime.Less
func upstreamByJobStartTimeLess(o []*batchv1.Job, i, j int) bool
