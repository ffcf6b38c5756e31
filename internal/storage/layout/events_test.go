package layout

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// events.k8s.io/v1 events are core events: one key, one stored encoding,
// each read converted to the version asked.
func TestEventsK8sIOEventsAreCoreEvents(t *testing.T) {
	cat := registry.NewCatalogue()
	core, _ := cat.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "events"})
	v1, ok := cat.Lookup(schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"})
	if !ok {
		t.Fatal("events.k8s.io/v1 events not served")
	}
	if a, b := Key(v1, "ns", "e"), Key(core, "ns", "e"); a != b || a != "/registry/core/events/ns/e" {
		t.Fatalf("keys %q and %q, want both /registry/core/events/ns/e", a, b)
	}
	data, err := Encode(&eventsv1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}, Note: "hi", Regarding: corev1.ObjectReference{Kind: "Pod", Name: "p"},
		ReportingController: "ctl"})
	if err != nil {
		t.Fatal(err)
	}
	kv := storage.KeyValue{Key: Key(core, "ns", "e"), Value: data, ModRevision: 5}
	obj, err := Decode(core, kv)
	if err != nil {
		t.Fatal(err)
	}
	ce := obj.(*corev1.Event)
	if ce.APIVersion != "v1" || ce.Message != "hi" || ce.InvolvedObject.Name != "p" || ce.ReportingController != "ctl" || ce.ResourceVersion != "5" {
		t.Errorf("read as core = %+v", ce)
	}
	obj, err = Decode(v1, kv)
	if err != nil {
		t.Fatal(err)
	}
	ev := obj.(*eventsv1.Event)
	if ev.APIVersion != "events.k8s.io/v1" || ev.Note != "hi" || ev.Regarding.Name != "p" || ev.ResourceVersion != "5" {
		t.Errorf("read as events.k8s.io/v1 = %+v", ev)
	}
}
