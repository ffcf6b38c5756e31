package job

import (
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
)

// backoffRecord is what decides how long a Job waits before replacing a
// failed pod: the failures since its last success and when the last one
// happened (upstream's backoffRecord).
type backoffRecord struct {
	key                      string
	failuresAfterLastSuccess int32
	lastFailureTime          *time.Time
}

// backoffStore keeps each Job's record between syncs, in memory as
// upstream's: a restart forgets them.
type backoffStore struct {
	mu      sync.Mutex
	records map[string]backoffRecord
}

func newBackoffStore() *backoffStore { return &backoffStore{records: map[string]backoffRecord{}} }

func (s *backoffStore) update(r backoffRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[r.key] = r
}

func (s *backoffStore) remove(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, key)
}

// next is the record after the pods that newly succeeded and failed: a
// success resets the count to the failures finished after the last
// success.
func (s *backoffStore) next(key string, succeeded, failed []*corev1.Pod) backoffRecord {
	s.mu.Lock()
	r, ok := s.records[key]
	s.mu.Unlock()
	if !ok {
		r = backoffRecord{key: key}
	}
	sortByFinishedTime(succeeded)
	sortByFinishedTime(failed)
	if len(succeeded) == 0 {
		if len(failed) == 0 {
			return r
		}
		r.failuresAfterLastSuccess += int32(len(failed))
		last := finishedTime(failed[len(failed)-1])
		r.lastFailureTime = &last
		return r
	}
	r.failuresAfterLastSuccess, r.lastFailureTime = 0, nil
	lastSuccess := finishedTime(succeeded[len(succeeded)-1])
	for i := len(failed) - 1; i >= 0; i-- {
		t := finishedTime(failed[i])
		if !t.After(lastSuccess) {
			break
		}
		if r.lastFailureTime == nil {
			r.lastFailureTime = &t
		}
		r.failuresAfterLastSuccess++
	}
	return r
}

func sortByFinishedTime(pods []*corev1.Pod) {
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int { return finishedTime(a).Compare(finishedTime(b)) })
}

// finishedTime is when a pod finished: its containers' last termination,
// else when it became not ready, else its deletion time less its grace
// period, else its creation.
func finishedTime(p *corev1.Pod) time.Time {
	if t := containersFinishTime(p); t != nil {
		return *t
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	if p.DeletionTimestamp != nil {
		return p.DeletionTimestamp.Add(-time.Duration(ptr.Deref(p.DeletionGracePeriodSeconds, 0)) * time.Second)
	}
	return p.CreationTimestamp.Time
}

// containersFinishTime is the latest termination of the pod's containers
// (nil when one has not terminated), then of its sidecars likewise.
func containersFinishTime(p *corev1.Pod) *time.Time {
	latest := latestFinishTime(nil, p.Status.ContainerStatuses, nil)
	sidecars := sets.New[string]()
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.Insert(c.Name)
		}
	}
	return latestFinishTime(latest, p.Status.InitContainerStatuses, sidecars)
}

func latestFinishTime(prev *time.Time, statuses []corev1.ContainerStatus, only sets.Set[string]) *time.Time {
	latest := prev
	for _, s := range statuses {
		if only != nil && !only.Has(s.Name) {
			continue
		}
		if s.State.Terminated == nil || s.State.Terminated.FinishedAt.IsZero() {
			return nil
		}
		if t := s.State.Terminated.FinishedAt.Time; latest == nil || latest.Before(t) {
			latest = &t
		}
	}
	return latest
}

// remaining is how long the Job must still wait before creating pods.
func (r backoffRecord) remaining(now time.Time) time.Duration {
	return remainingForFailures(now, r.failuresAfterLastSuccess, r.lastFailureTime)
}

// remainingForFailures: after n failures the wait is 10s·2^(n-1), at most
// 10 minutes, from the last failure.
func remainingForFailures(now time.Time, failures int32, last *time.Time) time.Duration {
	if failures == 0 || last == nil {
		return 0
	}
	d := podFailureBackoff
	for i := 1; i < int(failures); i++ {
		d *= 2
		if d >= maxPodFailureBackoff {
			d = maxPodFailureBackoff
			break
		}
	}
	elapsed := now.Sub(*last)
	if d < elapsed {
		return 0
	}
	return d - elapsed
}
