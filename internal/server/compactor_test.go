package server

import (
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

func TestCompactorKeepsOneIntervalOfHistory(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	create := func(n int) {
		for range n {
			rev, _ := store.Revision(ctx)
			if _, err := store.Create(ctx, fmt.Sprintf("/k/%d", rev+1), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
	}
	compacted := func() int64 {
		rev, err := store.CompactedRevision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	c := &compactor{store: store, log: slog.New(slog.NewTextHandler(io.Discard, nil))}

	create(3)
	c.tick(ctx) // sees 3, nothing older to compact
	if got := compacted(); got != 0 {
		t.Fatalf("after the first tick compacted = %d, want 0", got)
	}
	create(4)
	c.tick(ctx) // compacts to 3, sees 7
	if got := compacted(); got != 3 {
		t.Fatalf("after the second tick compacted = %d, want 3", got)
	}
	// What the last interval wrote is still listable at its revisions.
	if _, err := store.List(ctx, "/k/", storage.ListOptions{Revision: 4}); err != nil {
		t.Errorf("List at 4 (within the last interval) = %v", err)
	}
	c.tick(ctx) // no writes since: compacts to 7
	c.tick(ctx) // nothing new
	if got := compacted(); got != 7 {
		t.Errorf("after idle ticks compacted = %d, want 7", got)
	}
}

// TestCompactorKeepsWhatListsRead: a revision a list or watch is still
// reading pages at stays readable: compaction stops just below it.
func TestCompactorKeepsWhatListsRead(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	for i := range 9 {
		if _, err := store.Create(ctx, fmt.Sprintf("/k/%d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	reading := int64(5)
	c := &compactor{store: store, log: slog.New(slog.NewTextHandler(io.Discard, nil)), last: 8,
		reading: func() int64 { return reading }}
	c.tick(ctx)
	if got, _ := store.CompactedRevision(ctx); got != 4 {
		t.Fatalf("compacted to %d while a list reads at 5, want 4", got)
	}
	if _, err := store.List(ctx, "/k/", storage.ListOptions{Revision: 5}); err != nil {
		t.Errorf("List at 5 = %v", err)
	}
	reading = 0
	c.tick(ctx) // the list ended: the previous tick's revision
	if got, _ := store.CompactedRevision(ctx); got != 9 {
		t.Errorf("after the list ended compacted to %d, want 9", got)
	}
}
