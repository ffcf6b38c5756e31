package apiserver

import (
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

func sharedTestEvent(key string, rev int64) storage.Event {
	return storage.Event{Type: storage.EventPut, KV: storage.KeyValue{Key: key, ModRevision: rev}}
}

// An event is shared by resource, key and revision; one of many revisions
// ago is forgotten.
func TestSharedEventsByResourceKeyAndRevision(t *testing.T) {
	var s sharedEvents
	v1 := &registry.Resource{GroupVersionResource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}}
	v1beta2 := &registry.Resource{GroupVersionResource: schema.GroupVersionResource{Group: "apps", Version: "v1beta2", Resource: "deployments"}}
	ev := sharedTestEvent("/deployments/a/d", 7)
	first := s.get(v1, ev)
	if s.get(v1, ev) != first {
		t.Fatal("the same event at the same resource is not shared")
	}
	other := s.get(v1beta2, ev)
	if other == first {
		t.Fatal("the event at another version shares the first's objects")
	}
	if s.get(v1beta2, ev) != other || s.get(v1, ev) != first {
		t.Fatal("events of one revision at two resources are not both kept")
	}
	if s.get(v1, sharedTestEvent("/deployments/a/e", 7)) == first {
		t.Fatal("another key at the same revision shares the first's objects")
	}
	for rev := int64(8); rev < 8+sharedEventsKept; rev++ {
		s.get(v1, sharedTestEvent("/deployments/a/d", rev))
	}
	if s.get(v1, sharedTestEvent("/deployments/a/d", 8+sharedEventsKept-1)) == nil {
		t.Fatal("no event")
	}
	if s.get(v1, ev) == first {
		t.Fatalf("an event %d revisions old is still kept", sharedEventsKept)
	}
}

// Watchers asking at once for an event's frames get each encoding made
// once, the first one asked for and the others.
func TestSharedFramesAreEncodedOnce(t *testing.T) {
	var s sharedEvents
	res := &registry.Resource{GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}
	ev := sharedTestEvent("/configmaps/a/c", 3)
	keys := []frameKey{
		{typ: "ADDED", out: negotiated{media: mediaJSON}},
		{typ: "ADDED", out: negotiated{media: mediaProtobuf}},
		{typ: "DELETED", prev: true, out: negotiated{media: mediaJSON}},
	}
	var encoded [3]atomic.Int32
	var wg sync.WaitGroup
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := w % len(keys)
			got, err := s.get(res, ev).frame(keys[i], func() ([]byte, error) {
				encoded[i].Add(1)
				return []byte{byte('a' + i)}, nil
			})
			if err != nil || len(got) != 1 || got[0] != byte('a'+i) {
				t.Errorf("frame %d = %q, %v", i, got, err)
			}
		}()
	}
	wg.Wait()
	for i := range keys {
		if n := encoded[i].Load(); n != 1 {
			t.Errorf("frame %v encoded %d times, want once", keys[i], n)
		}
	}
}
