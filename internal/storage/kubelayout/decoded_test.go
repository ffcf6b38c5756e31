package kubelayout_test

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// TestDecodedValues: a value is read back as written; a value another
// server wrote at a later revision of the same key is read as that one, and
// changing a value read does not change the next read.
func TestDecodedValues(t *testing.T) {
	s, inner := newStore(t)
	res, _ := registry.NewCatalogue().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	key := layout.Key(res, "ns", "c")
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}, Data: map[string]string{"k": "mine"}}
	value, err := layout.Encode(cm)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(t.Context(), "/registry/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := s.Create(t.Context(), key, value)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.Events():
		if !bytes.Equal(ev.KV.Value, value) {
			t.Errorf("watch event of the create = %s, want %s", ev.KV.Value, value)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event for the create within 5s")
	}

	cm.Data["k"] = "theirs"
	var theirs bytes.Buffer
	if err := protobuf.NewSerializer(registry.Scheme(), registry.Scheme()).Encode(cm, &theirs); err != nil {
		t.Fatal(err)
	}
	if _, err := inner.Update(t.Context(), "/registry/configmaps/ns/c", theirs.Bytes(), created.ModRevision); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := s.Get(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := layout.Decode(res, got)
		if err != nil {
			t.Fatal(err)
		}
		if d := obj.(*corev1.ConfigMap).Data["k"]; d != "theirs" {
			t.Fatalf("read %d after another server's update: data %q, want theirs", i, d)
		}
		clear(got.Value) // a reader that reuses the buffer must not change the next read
	}
}
