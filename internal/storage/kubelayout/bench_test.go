package kubelayout_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// BenchmarkCreateWith6Watchers creates ConfigMaps through the store while
// six watchers of the whole registry (as the garbage collector, quota,
// service-account, token, root CA and PVC protection controllers watch)
// receive every event: the cost of one write as this server's watchers
// see it.
func BenchmarkCreateWith6Watchers(b *testing.B) {
	s, _ := newStore(b)
	res, _ := registry.NewCatalogue().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	const watchers = 6
	received := make(chan bool, watchers)
	for range watchers {
		w, err := s.Watch(b.Context(), "/registry/", 0)
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		go func() {
			for range b.N {
				_, ok := <-w.Events()
				received <- ok
			}
		}()
	}
	b.ResetTimer()
	for i := range b.N {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i), Namespace: "ns", UID: "0b6f4f2e-5b1c-4c59-9d7e-3f1b1b0e9a01"},
			Data:       map[string]string{"k": "v"}}
		value, err := layout.Encode(cm)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Create(b.Context(), layout.Key(res, "ns", cm.Name), value); err != nil {
			b.Fatal(err)
		}
		for range watchers { // each write waits for every watcher: none falls behind
			if !<-received {
				b.Fatal("a watch ended")
			}
		}
	}
}
