package controllers

import (
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

// TestLazyRecorderStartsOnFirstEvent: no recorder is started before an
// event, one is started for the first event of any kind, and every event
// reaches it in order, also from goroutines racing for the first.
func TestLazyRecorderStartsOnFirstEvent(t *testing.T) {
	fake := record.NewFakeRecorder(10)
	starts := 0
	r := &lazyRecorder{start: func() record.EventRecorder { starts++; return fake }}
	if starts != 0 {
		t.Fatalf("starts before any event = %d, want 0", starts)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); r.Event(pod, corev1.EventTypeNormal, "Raced", "m") }()
	}
	wg.Wait()
	r.Eventf(pod, corev1.EventTypeWarning, "Formatted", "n=%d", 1)
	r.AnnotatedEventf(pod, map[string]string{"a": "b"}, corev1.EventTypeNormal, "Annotated", "x")
	if starts != 1 {
		t.Fatalf("starts after 5 events = %d, want 1", starts)
	}
	want := []string{"Normal Raced m", "Normal Raced m", "Normal Raced m", "Warning Formatted n=1", "Normal Annotated x map[a:b]"}
	for i, w := range want {
		if got := <-fake.Events; got != w {
			t.Errorf("event %d = %q, want %q", i, got, w)
		}
	}
}
