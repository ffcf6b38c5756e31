package registry

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	coreEventGVK   = schema.GroupVersionKind{Version: "v1", Kind: "Event"}
	eventsV1GVK    = schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}
	coreEventsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	eventsV1Events = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}
)

func fullCoreEvent() *corev1.Event {
	t := metav1.NewTime(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	mt := metav1.NewMicroTime(time.Date(2026, 11, 26, 9, 0, 1, 5000, time.UTC))
	return &corev1.Event{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Name: "e", Namespace: "ns", UID: "u1", Labels: map[string]string{"a": "b"}},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p", UID: "pu", APIVersion: "v1", ResourceVersion: "7", FieldPath: "spec.containers{c}"},
		Reason:         "Started", Message: "started container", Source: corev1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp: t, LastTimestamp: t, Count: 3, Type: corev1.EventTypeNormal, EventTime: mt,
		Series: &corev1.EventSeries{Count: 2, LastObservedTime: mt}, Action: "Start",
		Related:             &corev1.ObjectReference{Kind: "Node", Name: "node-1"},
		ReportingController: "kubelet", ReportingInstance: "kubelet-node-1",
	}
}

func TestEventConvertsToEventsV1AsUpstream(t *testing.T) {
	in := fullCoreEvent()
	out, err := ConvertTo(in.DeepCopy(), eventsV1GVK)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := out.(*eventsv1.Event)
	if !ok {
		t.Fatalf("ConvertTo = %T, want *eventsv1.Event", out)
	}
	want := &eventsv1.Event{
		TypeMeta:   metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta: in.ObjectMeta, Regarding: in.InvolvedObject, Reason: in.Reason, Note: in.Message,
		DeprecatedSource: in.Source, DeprecatedFirstTimestamp: in.FirstTimestamp, DeprecatedLastTimestamp: in.LastTimestamp,
		DeprecatedCount: in.Count, Type: in.Type, EventTime: in.EventTime,
		Series: &eventsv1.EventSeries{Count: 2, LastObservedTime: in.Series.LastObservedTime}, Action: in.Action,
		Related: in.Related, ReportingController: in.ReportingController, ReportingInstance: in.ReportingInstance,
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("core -> events.k8s.io/v1 =\n%+v\nwant\n%+v", got, want)
	}
	back, err := ConvertTo(got, coreEventGVK)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, back) {
		t.Errorf("round trip =\n%+v\nwant\n%+v", back, in)
	}
}

func TestEventsV1IsStoredAsCoreEvent(t *testing.T) {
	in := &eventsv1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{Name: "e"}, Note: "hello", ReportingController: "ctl", DeprecatedCount: 4}
	stored, err := ToStorageVersion(in)
	if err != nil {
		t.Fatal(err)
	}
	core, ok := stored.(*corev1.Event)
	if !ok {
		t.Fatalf("ToStorageVersion = %T, want *corev1.Event", stored)
	}
	if core.GroupVersionKind() != coreEventGVK || core.Message != "hello" || core.ReportingController != "ctl" || core.Count != 4 {
		t.Errorf("stored = %+v", core)
	}
	same, err := ToStorageVersion(fullCoreEvent())
	if err != nil || same.(*corev1.Event).Message != "started container" {
		t.Errorf("core event not stored as is: %v", err)
	}
}

func TestEventsShareStorageInTheCatalogue(t *testing.T) {
	cat := NewCatalogue()
	res, ok := cat.Lookup(eventsV1Events)
	if !ok {
		t.Fatal("events.k8s.io/v1 events not served")
	}
	if got := res.StorageGroupVersion(); got != coreEventGVK.GroupVersion() {
		t.Errorf("events.k8s.io StorageGroupVersion = %v, want core v1", got)
	}
	core, _ := cat.Lookup(coreEventsGVR)
	if core.StoredAs != nil || core.StorageGroupVersion() != coreEventGVK.GroupVersion() {
		t.Errorf("core events stored as %v", core.StorageGroupVersion())
	}
	for _, tc := range []struct{ gvr, other schema.GroupVersionResource }{{coreEventsGVR, eventsV1Events}, {eventsV1Events, coreEventsGVR}} {
		got := cat.Equivalents(tc.gvr)
		if want := []schema.GroupVersionResource{tc.gvr, tc.other}; !reflect.DeepEqual(got, want) {
			t.Errorf("Equivalents(%v) = %v, want %v", tc.gvr, got, want)
		}
	}
	pods := cat.Equivalents(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	if len(pods) != 1 {
		t.Errorf("Equivalents(pods) = %v", pods)
	}
}

func TestSameStoredKind(t *testing.T) {
	for _, tc := range []struct {
		a, b schema.GroupKind
		want bool
	}{
		{coreEventGVK.GroupKind(), eventsV1GVK.GroupKind(), true},
		{eventsV1GVK.GroupKind(), coreEventGVK.GroupKind(), true},
		{schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}, schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}, true},
		{coreEventGVK.GroupKind(), schema.GroupKind{Kind: "Pod"}, false},
		{eventsV1GVK.GroupKind(), schema.GroupKind{Group: "events.k8s.io", Kind: "Other"}, false},
	} {
		if got := SameStoredKind(tc.a, tc.b); got != tc.want {
			t.Errorf("SameStoredKind(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
