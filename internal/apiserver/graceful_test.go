package apiserver

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gracefulPodDelete decides as upstream's BeforeDelete with the pod
// strategy: the grace period of the request, else of the pod; none for an
// unbound or finished pod; a second delete only shortens.
func TestGracefulPodDelete(t *testing.T) {
	now := time.Unix(1000, 0)
	bound := func(mutate ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 1},
			Spec: corev1.PodSpec{NodeName: "n", TerminationGracePeriodSeconds: ptrTo(int64(30))}}
		for _, m := range mutate {
			m(p)
		}
		return p
	}
	deleting := func(at, grace int64) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			ts := metav1.NewTime(time.Unix(at, 0))
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &grace
		}
	}
	cases := []struct {
		name              string
		pod               *corev1.Pod
		grace             *int64
		graceful, pending bool
		wantAt, wantGrace int64
	}{
		{name: "pod's own period", pod: bound(), graceful: true, wantAt: 1030, wantGrace: 30},
		{name: "request's period", pod: bound(), grace: ptrTo(int64(5)), graceful: true, wantAt: 1005, wantGrace: 5},
		{name: "zero", pod: bound(), grace: ptrTo(int64(0)), graceful: true, wantAt: 1000, wantGrace: 0},
		{name: "negative is one", pod: bound(), grace: ptrTo(int64(-3)), graceful: true, wantAt: 1001, wantGrace: 1},
		{name: "unbound", pod: bound(func(p *corev1.Pod) { p.Spec.NodeName = "" }), graceful: true, wantAt: 1000, wantGrace: 0},
		{name: "succeeded", pod: bound(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), graceful: true, wantAt: 1000, wantGrace: 0},
		{name: "shorter again", pod: bound(deleting(1020, 30)), grace: ptrTo(int64(10)), graceful: true, wantAt: 1000, wantGrace: 10},
		{name: "shorter than passed", pod: bound(deleting(1020, 30)), grace: ptrTo(int64(5)), graceful: true, wantAt: 1000, wantGrace: 1},
		{name: "longer again", pod: bound(deleting(1020, 30)), grace: ptrTo(int64(60)), pending: true},
		{name: "again without period", pod: bound(deleting(1020, 30)), pending: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			graceful, pending := gracefulPodDelete(tc.pod, &metav1.DeleteOptions{GracePeriodSeconds: tc.grace}, now)
			if graceful != tc.graceful || pending != tc.pending {
				t.Fatalf("gracefulPodDelete = %v, %v, want %v, %v", graceful, pending, tc.graceful, tc.pending)
			}
			if !graceful {
				return
			}
			if at, g := tc.pod.DeletionTimestamp.Unix(), *tc.pod.DeletionGracePeriodSeconds; at != tc.wantAt || g != tc.wantGrace {
				t.Errorf("deletionTimestamp %d, grace %d, want %d, %d", at, g, tc.wantAt, tc.wantGrace)
			}
		})
	}
}
