package registry

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Events are checked by the version a request names, as kube-apiserver
// 1.37.2 answers (recorded from it): through core v1 only the legacy rules,
// and metadata by the common checks alone (any path-segment name, no core
// finalizer rule), and only when the legacy rules pass; through
// events.k8s.io/v1 the new API's rules as well, metadata included.
func TestCoreEventValidation(t *testing.T) {
	oldStyle := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name", Finalizers: []string{"cleanup"}},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p"}, Reason: "R"}
	if got := aggregate(createErrors(t, oldStyle)); got != "" {
		t.Errorf("old-style core Event: %s, want it accepted", got)
	}
	newStyle := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name2", Labels: map[string]string{"bad key!": "v"}},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "other"}, EventTime: metav1.NewMicroTime(time.Unix(100, 0)),
		ReportingController: "bad name!", Series: &corev1.EventSeries{Count: 1}}
	want := strings.Join([]string{
		`reportingComponent: Invalid value: "bad name!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		"reportingInstance: Required value", "action: Required value", "reason: Required value",
	}, ", ")
	if got := aggregate(createErrors(t, newStyle)); got != "["+want+"]" {
		t.Errorf("core Event with an eventTime:\n got %s\nwant [%s]", got, want)
	}
}

func TestEventsV1EventValidation(t *testing.T) {
	ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name3"}, Regarding: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "other"},
		DeprecatedCount: 3, Type: "X", Series: &eventsv1.EventSeries{Count: 1}}
	want := strings.Join([]string{
		`involvedObject.namespace: Invalid value: "other": does not match event.namespace`,
		`metadata.name: Invalid value: "Bad_Name3": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		`series.count: Invalid value: "": should be at least 2`, "series.lastObservedTime: Required value", "eventTime: Required value",
		`type: Invalid value: "": has invalid value: X`, `count: Invalid value: "": needs to be unset`,
	}, ", ")
	if got := aggregate(createErrors(t, ev)); got != "["+want+"]" {
		t.Errorf("create:\n got %s\nwant [%s]", got, want)
	}
	old := &eventsv1.Event{ObjectMeta: meta1("ev5"), Regarding: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "default"},
		EventTime: metav1.NewMicroTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), ReportingController: "example.com/c",
		ReportingInstance: "i", Action: "A", Reason: "R", Type: "Normal", Note: "n"}
	changed := old.DeepCopy()
	changed.Regarding.Name, changed.Reason, changed.Note, changed.Series = "q", "R2", "n2", &eventsv1.EventSeries{Count: 1}
	changed.EventTime = metav1.NewMicroTime(old.EventTime.Add(time.Second))
	want = strings.Join([]string{
		`series.count: Invalid value: "": should be at least 2`, "series.lastObservedTime: Required value",
		`involvedObject: Invalid value: {"Kind":"Pod","Namespace":"default","Name":"q","UID":"","APIVersion":"","ResourceVersion":"","FieldPath":""}: field is immutable`,
		`reason: Invalid value: "R2": field is immutable`, `message: Invalid value: "n2": field is immutable`,
		`eventTime: Invalid value: "2026-01-01T00:00:01.000000Z": field is immutable`,
	}, ", ")
	if got := aggregate(updateErrors(t, changed, old)); got != "["+want+"]" {
		t.Errorf("update:\n got %s\nwant [%s]", got, want)
	}
	// a change below the microsecond is none (clients that truncate)
	within := old.DeepCopy()
	within.EventTime = metav1.NewMicroTime(old.EventTime.Add(500 * time.Nanosecond))
	if got := aggregate(updateErrors(t, within, old)); got != "" {
		t.Errorf("eventTime changed within its microsecond: %s, want it accepted", got)
	}
}
