package ttlafterfinished

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

func finishedJob(ttl *int32, cond batchv1.JobConditionType, status corev1.ConditionStatus, at time.Time) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"}, Spec: batchv1.JobSpec{TTLSecondsAfterFinished: ttl},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at.Add(-time.Hour))},
			{Type: cond, Status: status, LastTransitionTime: metav1.NewTime(at)}}}}
}

func TestDue(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	deleting := finishedJob(ptr.To(int32(0)), batchv1.JobComplete, corev1.ConditionTrue, now.Add(-time.Minute))
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	for _, tc := range []struct {
		name      string
		job       *batchv1.Job
		due       bool
		requeue   time.Duration // 0: none
		wantError bool
	}{
		{"complete, TTL passed", finishedJob(ptr.To(int32(10)), batchv1.JobComplete, corev1.ConditionTrue, now.Add(-11*time.Second)), true, 0, false},
		{"failed, TTL passed", finishedJob(ptr.To(int32(0)), batchv1.JobFailed, corev1.ConditionTrue, now), true, 0, false},
		{"complete, TTL to come", finishedJob(ptr.To(int32(60)), batchv1.JobComplete, corev1.ConditionTrue, now.Add(-time.Second)), false, 59 * time.Second, false},
		{"no TTL", finishedJob(nil, batchv1.JobComplete, corev1.ConditionTrue, now.Add(-time.Hour)), false, 0, false},
		{"not finished", finishedJob(ptr.To(int32(0)), batchv1.JobComplete, corev1.ConditionFalse, now.Add(-time.Hour)), false, 0, false},
		{"being deleted", deleting, false, 0, false},
		{"finished at no time", finishedJob(ptr.To(int32(0)), batchv1.JobComplete, corev1.ConditionTrue, time.Time{}), false, 0, true},
	} {
		q := &recordingQueue{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
		c := &Controller{now: func() time.Time { return now }, queue: q}
		due, err := c.due(tc.job, "ns/j")
		if due != tc.due || (err != nil) != tc.wantError {
			t.Errorf("%s: due = %t, %v; want %t, error %t", tc.name, due, err, tc.due, tc.wantError)
		}
		var requeue time.Duration
		if len(q.after) > 0 {
			requeue = q.after[0]
		}
		if len(q.after) > 1 || requeue != tc.requeue {
			t.Errorf("%s: queued again after %v, want %v", tc.name, q.after, tc.requeue)
		}
		q.ShutDown()
	}
}

// recordingQueue is a work queue that notes what is added for later.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	after []time.Duration
}

func (q *recordingQueue) AddAfter(_ string, d time.Duration) { q.after = append(q.after, d) }
