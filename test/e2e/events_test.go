package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// TestEventsOneResourceInTwoGroups checks that core/v1 and events.k8s.io/v1
// Events are one resource, as kube-apiserver serves them: an Event written
// through one group is read, listed, watched and deleted through the other,
// its fields converted (message is note, involvedObject is regarding, ...).
func TestEventsOneResourceInTwoGroups(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--storage", "memory")
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	core, v1 := cs.CoreV1().Events("default"), cs.EventsV1().Events("default")
	coreWatch, err := core.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=via-events-api"})
	if err != nil {
		t.Fatal(err)
	}
	defer coreWatch.Stop()
	v1Watch, err := v1.Watch(ctx, metav1.ListOptions{FieldSelector: "reason=CoreReason"})
	if err != nil {
		t.Fatal(err)
	}
	defer v1Watch.Stop()

	target := corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-0", APIVersion: "v1"}
	_, err = v1.Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "via-events-api"}, EventTime: metav1.NowMicro(),
		Reason: "EventsReason", Type: "Normal", Action: "Probe", Note: "note written through events.k8s.io",
		ReportingController: "example.com/ctrl", ReportingInstance: "ctrl-1", Regarding: target}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := core.Get(ctx, "via-events-api", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("core get of an events.k8s.io event: %v", err)
	}
	if got.Message != "note written through events.k8s.io" || got.InvolvedObject != target || got.ReportingController != "example.com/ctrl" ||
		got.ReportingInstance != "ctrl-1" || got.Action != "Probe" {
		t.Errorf("core view = %+v", got)
	}
	expectWatched(t, coreWatch, "via-events-api", func(o any) string { return o.(*corev1.Event).Message })

	_, err = core.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "via-core-api"}, Reason: "CoreReason", Type: "Warning",
		Message: "message written through core", Count: 3, Source: corev1.EventSource{Component: "kubelet", Host: "node-1"},
		InvolvedObject: target}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := v1.List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=web-0,type=Warning"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("events.k8s.io list of core events = %v, %v", list, err)
	}
	if e := list.Items[0]; e.Name != "via-core-api" || e.Note != "message written through core" || e.DeprecatedCount != 3 ||
		e.DeprecatedSource.Host != "node-1" || e.Regarding != target {
		t.Errorf("events.k8s.io view = %+v", e)
	}
	expectWatched(t, v1Watch, "via-core-api", func(o any) string { return o.(*eventsv1.Event).Note })

	out := a.MustKubectl(t, "", "get", "events", "-n", "default")
	if !strings.Contains(out, "note written through events.k8s.io") || !strings.Contains(out, "EventsReason") {
		t.Errorf("kubectl get events does not show the events.k8s.io event:\n%s", out)
	}
	out = a.MustKubectl(t, "", "get", "events.v1.events.k8s.io", "-n", "default", "-o", "name")
	if !strings.Contains(out, "event.events.k8s.io/via-core-api") {
		t.Errorf("kubectl get events.v1.events.k8s.io does not show the core event:\n%s", out)
	}

	if err := v1.Delete(ctx, "via-core-api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Get(ctx, "via-core-api", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("core get after an events.k8s.io delete: %v, want NotFound", err)
	}
}

// expectWatched waits for the ADDED event of name on w and checks its
// object's text is set (converted to the watch's version).
func expectWatched(t *testing.T, w watch.Interface, name string, text func(any) string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed before %s", name)
			}
			if ev.Type != watch.Added {
				continue
			}
			if m, err := metav1Object(ev.Object); err == nil && m == name {
				if text(ev.Object) == "" {
					t.Errorf("watched %s without its text: %+v", name, ev.Object)
				}
				return
			}
		case <-timeout:
			t.Fatalf("no ADDED event for %s", name)
		}
	}
}

func metav1Object(o any) (string, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return "", apierrors.NewBadRequest("not an object")
	}
	return m.GetName(), nil
}

// coreEventsPolicy denies core/v1 Events whose message starts with
// "forbidden", matching by Equivalent: an events.k8s.io/v1 request reaches
// it converted to core/v1 (note as message), as upstream's equivalent
// resources are those of one storage.
const coreEventsPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: event-words}
spec:
  failurePolicy: Fail
  matchConstraints:
    matchPolicy: Equivalent
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [events]}
  validations:
  - expression: "!object.message.startsWith('forbidden')"
    messageExpression: "'message ' + object.message + ' (seen as ' + object.apiVersion + ')'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: event-words}
spec:
  policyName: event-words
  validationActions: [Deny]
`

func TestPoliciesSeeEventsThroughEquivalentGroups(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--storage", "memory")
	a.MustKubectl(t, coreEventsPolicy, "apply", "-f", "-")
	v1 := kubernetes.NewForConfigOrDie(a.RestConfig(t)).EventsV1().Events("default")
	mk := func(name, note string) error {
		_, err := v1.Create(t.Context(), &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: name}, EventTime: metav1.NowMicro(),
			Reason: "R", Type: "Normal", Action: "A", Note: note, ReportingController: "example.com/c", ReportingInstance: "c-1",
			Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"}}, metav1.CreateOptions{})
		return err
	}
	want := "message forbidden word (seen as v1)"
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		err := mk("denied-"+strconv.Itoa(i), "forbidden word")
		if apierrors.IsInvalid(err) && strings.Contains(err.Error(), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events.k8s.io create with a forbidden note: %v, want 422 %q", err, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := mk("allowed", "fine words"); err != nil {
		t.Errorf("events.k8s.io create with an allowed note: %v", err)
	}
}
