package controllers

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/pkg/storage"
)

// kv is a stored ConfigMap of namespace "ns" with the given uid, owners
// (each named as its uid) and finalizers.
func kv(name string, uid types.UID, deleting bool, finalizers []string, owners ...types.UID) storage.KeyValue {
	return kvIn("ns", name, uid, deleting, finalizers, owners...)
}

// kvIn is kv in namespace.
func kvIn(namespace, name string, uid types.UID, deleting bool, finalizers []string, owners ...types.UID) storage.KeyValue {
	m := map[string]any{"name": name, "namespace": namespace, "uid": uid, "finalizers": finalizers}
	if deleting {
		m["deletionTimestamp"] = "2026-01-01T00:00:00Z"
	}
	var refs []metav1.OwnerReference
	yes := true
	for _, o := range owners {
		refs = append(refs, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: string(o), UID: o, BlockOwnerDeletion: &yes})
	}
	m["ownerReferences"] = refs
	data, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": m})
	return storage.KeyValue{Key: "/registry/core/configmaps/" + namespace + "/" + name, Value: data}
}

func put(k storage.KeyValue) storage.Event { return storage.Event{Type: storage.EventPut, KV: k} }
func del(k storage.KeyValue) storage.Event {
	return storage.Event{Type: storage.EventDelete, KV: storage.KeyValue{Key: k.Key}, PrevKV: &k}
}

func TestGraphQueuesWork(t *testing.T) {
	owner, dep := kv("o", "o", false, nil), kv("dep", "d", false, nil, "o")
	for _, tc := range []struct {
		name   string
		events []storage.Event
		want   []work // from the last event
	}{
		{"dependent of a stored owner", []storage.Event{put(owner), put(dep)}, nil},
		{"dependent of a missing owner", []storage.Event{put(dep)}, []work{{uid: "d"}}},
		{"owner deleted", []storage.Event{put(owner), put(dep), del(owner)}, []work{{uid: "d"}}},
		{"owner starts orphaning", []storage.Event{put(owner), put(dep), put(kv("o", "o", true, []string{"orphan"}))},
			[]work{{uid: "o", orphan: true}}},
		{"owner starts foreground deletion", []storage.Event{put(owner), put(dep), put(kv("o", "o", true, []string{"foregroundDeletion"}))},
			[]work{{uid: "d"}, {uid: "o"}}},
		{"blocking dependent goes", []storage.Event{put(kv("o", "o", true, []string{"foregroundDeletion"})), put(dep), del(dep)},
			[]work{{uid: "o"}}},
		{"dependent of an owner in another namespace", []storage.Event{put(kvIn("other", "o", "o", false, nil)), put(dep)},
			[]work{{uid: "d", invalidOwner: "o"}}},
		{"owner in another namespace stored after its dependent", []storage.Event{put(dep), put(kvIn("other", "o", "o", false, nil))},
			[]work{{uid: "d", invalidOwner: "o"}}},
		{"dependent adds a reference to an owner in another namespace", []storage.Event{put(kvIn("other", "o", "o", false, nil)), put(kv("dep", "d", false, nil)), put(dep)},
			[]work{{uid: "d", invalidOwner: "o"}}},
		{"dependent names its owner's uid with another name", []storage.Event{put(kv("renamed", "o", false, nil)), put(dep)},
			[]work{{uid: "d"}}},
		{"dependent drops its reference", []storage.Event{put(kv("o", "o", true, []string{"foregroundDeletion"})), put(dep), put(kv("dep", "d", false, nil))},
			[]work{{uid: "o"}}},
	} {
		g := newGraph()
		var got []work
		for _, ev := range tc.events {
			got = g.apply(ev)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: work = %v, want %v", tc.name, got, tc.want)
		}
		checkGraph(t, g)
	}
}

// checkGraph verifies the graph's invariants: byKey and nodes agree, and
// every stored object is a dependent of each of its owners.
func checkGraph(t *testing.T, g *graph) {
	t.Helper()
	for key, uid := range g.byKey {
		if n := g.nodes[uid]; n == nil || n.key != key {
			t.Errorf("byKey[%s] = %s, which is not that node", key, uid)
		}
	}
	for uid, n := range g.nodes {
		for _, o := range n.owners {
			if !g.dependents[o.UID][uid] {
				t.Errorf("%s is missing from the dependents of %s", uid, o.UID)
			}
		}
	}
}

func TestGraphResetFindsPendingWork(t *testing.T) {
	g := newGraph()
	got := g.reset([]storage.KeyValue{kv("dep", "d", false, nil, "gone"), kv("o", "o", true, []string{"orphan"})})
	if want := []work{{uid: "d"}, {uid: "o", orphan: true}}; !slices.Equal(got, want) {
		t.Errorf("reset work = %v, want %v", got, want)
	}
	checkGraph(t, g)
}

func BenchmarkGraphApply(b *testing.B) {
	g := newGraph()
	owner := kv("o", "o", false, nil)
	g.apply(put(owner))
	events := make([]storage.Event, 1000)
	for i := range events {
		events[i] = put(kv(fmt.Sprintf("dep-%d", i), types.UID(fmt.Sprint("d", i)), false, nil, "o"))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.apply(events[i%len(events)])
	}
}

// After a mass deletion the graph's maps are remade at their new size, and
// the graph still answers as before: an owner's deletion queues the
// dependents that remain.
func TestGraphShrinksAfterMassDeletion(t *testing.T) {
	g := newGraph()
	g.apply(put(kv("o", "o", false, nil)))
	n := 4 * shrinkFloor
	objs := make([]storage.KeyValue, n)
	for i := range objs {
		objs[i] = kv(fmt.Sprintf("cm-%d", i), types.UID(fmt.Sprintf("u%d", i)), false, nil, "o")
		g.apply(put(objs[i]))
	}
	if g.peak != n+1 {
		t.Fatalf("peak = %d, want %d", g.peak, n+1)
	}
	kept := 10
	for _, o := range objs[kept:] {
		g.apply(del(o))
	}
	if g.peak >= n/4 {
		t.Errorf("peak after deleting all but %d of %d = %d, want the maps remade (peak under %d)", kept+1, n+1, g.peak, n/4)
	}
	checkGraph(t, g)
	got := g.apply(del(kv("o", "o", false, nil)))
	slices.SortFunc(got, func(a, b work) int { return cmp.Compare(a.uid, b.uid) })
	var want []work
	for _, o := range objs[:kept] {
		n := nodeFrom(o)
		want = append(want, work{uid: n.uid})
	}
	slices.SortFunc(want, func(a, b work) int { return cmp.Compare(a.uid, b.uid) })
	if !reflect.DeepEqual(got, want) {
		t.Errorf("work after deleting the owner = %v, want %v", got, want)
	}
}
