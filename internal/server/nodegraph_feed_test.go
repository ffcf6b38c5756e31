package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// podRecorder stands for the graph: the pods it holds, by name, with their
// resourceVersion, and the calls it had.
type podRecorder struct {
	pods                   map[string]string
	adds, updates, removes int
}

func (r *podRecorder) handlers() graphHandlers {
	return handlers(
		func(p *corev1.Pod) { r.adds++; r.pods[p.Name] = p.ResourceVersion },
		func(_, p *corev1.Pod) { r.updates++; r.pods[p.Name] = p.ResourceVersion },
		func(p *corev1.Pod) { r.removes++; delete(r.pods, p.Name) })
}

func (r *podRecorder) holds() string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(r.pods)) {
		out = append(out, name+"@"+r.pods[name])
	}
	return "[" + strings.Join(out, ",") + "]"
}

func newTestFeed(t *testing.T, store storage.Store) (*graphFeed, *podRecorder) {
	t.Helper()
	res, ok := registry.NewCatalogue().Lookup(corev1.SchemeGroupVersion.WithResource("pods"))
	if !ok {
		t.Fatal("pods are not served")
	}
	r := &podRecorder{pods: map[string]string{}}
	return newGraphFeed(store, res, r.handlers(), slog.New(slog.NewTextHandler(io.Discard, nil))), r
}

func podJSON(t *testing.T, name string) []byte {
	t.Helper()
	data, err := json.Marshal(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func podAt(name string, rev int64) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: strconv.FormatInt(rev, 10)}}
}

// step is one event: from the watch or from this server's write observer.
type step struct {
	observed, deleted bool
	rev               int64
}

// The watch and the write observer deliver the same writes in any order;
// what the graph holds is the latest write, whatever the order.
func TestGraphFeedIgnoresStaleEvents(t *testing.T) {
	const key = "/registry/core/pods/default/p"
	put := func(rev int64) step { return step{rev: rev} }
	del := func(rev int64) step { return step{deleted: true, rev: rev} }
	seen := func(s step) step { s.observed = true; return s }
	for _, tc := range []struct {
		name  string
		steps []step
		want  string
		adds  int
	}{
		{"observed only (a write of this server)", []step{seen(put(5))}, "[p@5]", 1},
		{"observed then watched", []step{seen(put(5)), put(5)}, "[p@5]", 1},
		{"watched then observed", []step{put(5), seen(put(5))}, "[p@5]", 1},
		{"observed delete, stale create from the watch", []step{seen(put(5)), seen(del(5)), put(5), del(6)}, "[]", 1},
		{"observed delete before any create", []step{seen(del(5)), put(5), del(6)}, "[]", 0},
		{"recreated after an observed delete", []step{seen(del(5)), put(5), del(6), put(7)}, "[p@7]", 1},
		{"observed update, older watch event", []step{put(5), seen(put(8)), put(6), put(8)}, "[p@8]", 1},
		{"older observed write after the watch", []step{put(8), seen(put(5))}, "[p@8]", 1},
		{"watched delete of a kept pod", []step{put(5), del(6)}, "[]", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, r := newTestFeed(t, memory.New())
			for _, s := range tc.steps {
				switch {
				case s.observed:
					f.written(key, podAt("p", s.rev), s.rev, s.deleted)
				case s.deleted:
					f.event(storage.Event{Type: storage.EventDelete, KV: storage.KeyValue{Key: key, ModRevision: s.rev}})
				default:
					f.event(storage.Event{Type: storage.EventPut, KV: storage.KeyValue{Key: key, Value: podJSON(t, "p"), ModRevision: s.rev}})
				}
			}
			if got := r.holds(); got != tc.want || r.adds != tc.adds {
				t.Errorf("graph holds %s after %d adds, want %s after %d", got, r.adds, tc.want, tc.adds)
			}
			if len(f.gone) != 0 && f.rev >= maxRev(tc.steps) {
				t.Errorf("tombstones %v kept past the revision followed (%d)", f.gone, f.rev)
			}
		})
	}
}

func maxRev(steps []step) int64 {
	var m int64
	for _, s := range steps {
		if !s.observed && s.rev > m {
			m = s.rev
		}
	}
	return m
}

// A list brings the graph to storage's state, keeping what this server
// wrote after the list's revision; a watch that cannot resume (history
// compacted) lists again.
func TestGraphFeedListsAgainAfterCompaction(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	for _, name := range []string{"a", "b"} {
		if _, err := store.Create(ctx, "/registry/core/pods/default/"+name, podJSON(t, name)); err != nil {
			t.Fatal(err)
		}
	}
	f, r := newTestFeed(t, store)
	f.written("/registry/core/pods/default/later", podAt("later", 1000), 1000, false)
	if err := f.list(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := r.holds(), "[a@1,b@2,later@1000]"; got != want {
		t.Fatalf("after the first list the graph holds %s, want %s", got, want)
	}
	if _, _, err := store.Delete(ctx, "/registry/core/pods/default/a", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(ctx, "/registry/core/pods/default/c", podJSON(t, "c")); err != nil {
		t.Fatal(err)
	}
	if err := store.Compact(ctx, 4); err != nil {
		t.Fatal(err)
	}
	go f.run(ctx)
	want := "[b@2,c@4,later@1000]"
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		f.mu.Lock()
		got := r.holds()
		f.mu.Unlock()
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after compaction the graph holds %s, want %s", got, want)
		}
	}
}
