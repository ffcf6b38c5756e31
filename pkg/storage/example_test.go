package storage_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// Every write raises the store's revision by one, and a key's ModRevision is
// its resourceVersion: an update that expects an older revision fails with
// ErrConflict, and a watch from a past revision replays what happened since.
func Example() {
	ctx := context.Background()
	var s storage.Store = memory.New()
	defer s.Close()

	a, _ := s.Create(ctx, "/registry/configmaps/default/a", []byte(`{"data":{"k":"1"}}`))
	b, _ := s.Create(ctx, "/registry/configmaps/default/b", []byte(`{}`))
	fmt.Println("created at revisions", a.ModRevision, b.ModRevision)

	a2, _ := s.Update(ctx, a.Key, []byte(`{"data":{"k":"2"}}`), a.ModRevision)
	_, err := s.Update(ctx, a.Key, []byte(`{"data":{"k":"3"}}`), a.ModRevision)
	fmt.Println("stale update:", errors.Is(err, storage.ErrConflict), "- current revision", a2.ModRevision)

	page, _ := s.List(ctx, "/registry/configmaps/default/", storage.ListOptions{Limit: 1})
	fmt.Println("first page:", page.Items[0].Key, "more:", page.More, "at revision", page.Revision)

	w, _ := s.Watch(ctx, "/registry/configmaps/", a.ModRevision)
	defer w.Stop()
	for range 2 {
		ev := <-w.Events()
		fmt.Println("event", ev.Type, ev.KV.Key, ev.KV.ModRevision)
	}
	// Output:
	// created at revisions 1 2
	// stale update: true - current revision 3
	// first page: /registry/configmaps/default/a more: true at revision 3
	// event PUT /registry/configmaps/default/b 2
	// event PUT /registry/configmaps/default/a 3
}
