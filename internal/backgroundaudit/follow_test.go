package backgroundaudit

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/storage"
)

// scanListCountingStore counts the Lists of a scan (by their page size)
// under prefix.
type scanListCountingStore struct {
	storage.Store
	prefix string
	limit  int64

	mu    sync.Mutex
	lists int
}

func (s *scanListCountingStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if strings.HasPrefix(prefix, s.prefix) && opts.Limit == s.limit {
		s.mu.Lock()
		s.lists++
		s.mu.Unlock()
	}
	return s.Store.List(ctx, prefix, opts)
}

func (s *scanListCountingStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

// TestRunFollowsChangesToScannedObjects: after its first scan, Run sees
// an object changed into and out of violation, a new one and a deleted
// one within its check period, without scanning again.
func TestRunFollowsChangesToScannedObjects(t *testing.T) {
	e := newMemoryEnv(t)
	e.apply(maxKeysPolicy + namespace("a") + configMap("a", "k3", 3, true) + configMap("a", "k5", 5, true) + configMap("a", "k1", 1, true))
	counting := &scanListCountingStore{Store: e.store, prefix: "/registry/core/configmaps/", limit: 7}
	e.store = counting
	s := e.scanner(Options{CheckEvery: 10 * time.Millisecond, Interval: time.Hour, PageSize: 7})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	waitFor(t, s, []string{"a/k3", "a/k5"})
	scans := counting.count()
	objects := s.Results().Objects
	e.write(configMap("a", "k3", 1, true))
	waitFor(t, s, []string{"a/k5"})
	e.write(configMap("a", "k1", 4, true) + configMap("a", "k7", 7, true) + configMap("a", "k0", 0, true))
	waitFor(t, s, []string{"a/k1", "a/k5", "a/k7"})
	if _, _, err := e.store.Delete(ctx, "/registry/core/configmaps/a/k5", 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, []string{"a/k1", "a/k7"})

	r := s.Results()
	if got := counting.count(); got != scans {
		t.Errorf("the ConfigMaps were listed %d times more while changes were followed; want none (no rescan)", got-scans)
	}
	if want := objects + 1; r.Objects != want {
		t.Errorf("objects = %d, want %d (two created, one deleted)", r.Objects, want)
	}
	if br := r.Bindings[0]; br.Evaluated != 4 || br.passed != 2 {
		t.Errorf("evaluated %d, passed %d; want the 4 labelled ConfigMaps left, 2 passing", br.Evaluated, br.passed)
	}
	if r.Updated.Before(r.Finished) {
		t.Errorf("updated %v before the scan finished %v", r.Updated, r.Finished)
	}
}

// write writes each YAML document of docs (create or replace), leaving
// the policy snapshot as it is (apply reloads it, which starts a rescan).
func (e *env) write(docs string) {
	e.t.Helper()
	for _, doc := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(doc) != "" {
			e.put(context.Background(), e.decode(doc))
		}
	}
}

// TestLedgerResultsAreInKeyOrderAndBounded: a ledger's results list each
// binding's findings in storage key order, at most MaxFindings, and a
// replaced object's old outcome is gone.
func TestLedgerResultsAreInKeyOrderAndBounded(t *testing.T) {
	e := newMemoryEnv(t)
	e.apply(maxKeysPolicy)
	l := newLedger(bindings(e.scanner(Options{}).src.Current()), time.Now())
	k := bindingKey{"max-keys", "max-keys-audit"}
	fail := func(msg string) outcome { return outcome{binding: k, kind: violated, messages: []string{msg}} }
	for i := MaxFindings + 1; i >= 0; i-- {
		key := "/registry/core/configmaps/x/" + string(rune('a'+i/100)) + string(rune('a'+i%100/10)) + string(rune('a'+i%10))
		l.objects++
		l.entries[key] = ledgerEntry{ref: ObjectRef{Name: key}, outcomes: []outcome{fail("first")}}
	}
	l.set("/registry/core/configmaps/x/aaa", ObjectRef{Name: "aaa"}, nil, false)
	r := l.results(time.Now(), time.Time{})
	br := r.Bindings[0]
	if len(br.Violations) != MaxFindings || br.Truncated != 1 {
		t.Fatalf("%d violations, %d truncated; want %d and 1", len(br.Violations), br.Truncated, MaxFindings)
	}
	names := make([]string, len(br.Violations))
	for i, f := range br.Violations {
		names[i] = f.Object.Name
	}
	if !slices.IsSorted(names) || strings.HasSuffix(names[0], "/aaa") {
		t.Errorf("violations start %v; want key order without the object that no binding matches any more", names[:3])
	}
}
