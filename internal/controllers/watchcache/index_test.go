package watchcache

import (
	"slices"
	"strings"
	"testing"

	"github.com/admitd/admitd/pkg/storage"
)

// item is a cached test object: its stored value is "<owner>" and it is
// indexed by it.
type item struct{ key, owner string }

func newItemCache() *Cache[item] {
	decode := func(kv storage.KeyValue) (item, error) { return item{key: kv.Key, owner: string(kv.Value)}, nil }
	return New("/items/", decode, Handlers[item]{}, func(string, error) {})
}

func put(c *Cache[item], key, owner string, rev int64) {
	c.Event(storage.Event{Type: storage.EventPut, KV: storage.KeyValue{Key: "/items/" + key, Value: []byte(owner), ModRevision: rev}})
}

func byOwner(it item) []string { return []string{it.owner} }

// keysUnder lists the keys of the objects the owner index has under owner.
func keysUnder(c *Cache[item], owner string) []string {
	var keys []string
	for _, it := range c.ByIndex("owner", owner) {
		keys = append(keys, strings.TrimPrefix(it.key, "/items/"))
	}
	slices.Sort(keys)
	return keys
}

func TestIndexFollowsChanges(t *testing.T) {
	c := newItemCache()
	c.Reset([]storage.KeyValue{{Key: "/items/ns/a", Value: []byte("x"), ModRevision: 1}, {Key: "/items/ns/b", Value: []byte("y"), ModRevision: 2}})
	c.AddIndex("owner", byOwner) // after the listing: built from it
	c.AddIndex("owner", func(item) []string { return []string{"ignored"} })
	if got := keysUnder(c, "x"); !slices.Equal(got, []string{"ns/a"}) {
		t.Fatalf("after the listing x has %v", got)
	}
	put(c, "ns/c", "x", 3)
	put(c, "other/a", "x", 4)
	put(c, "ns/b", "x", 5) // moves from y to x
	if got := keysUnder(c, "x"); !slices.Equal(got, []string{"ns/a", "ns/b", "ns/c", "other/a"}) {
		t.Fatalf("after the puts x has %v", got)
	}
	if got := keysUnder(c, "y"); len(got) != 0 {
		t.Fatalf("y still has %v after its object moved", got)
	}
	c.Event(storage.Event{Type: storage.EventDelete, KV: storage.KeyValue{Key: "/items/ns/a", ModRevision: 6}})
	if got := keysUnder(c, "x"); !slices.Equal(got, []string{"ns/b", "ns/c", "other/a"}) {
		t.Fatalf("after the delete x has %v", got)
	}
	if got := keysUnder(c, "ignored"); len(got) != 0 {
		t.Fatalf("a second AddIndex of the same name replaced the first: %v", got)
	}
	c.Reset([]storage.KeyValue{{Key: "/items/ns/c", Value: []byte("z"), ModRevision: 7}})
	if got := keysUnder(c, "x"); len(got) != 0 {
		t.Fatalf("after a relisting x has %v", got)
	}
	if got := keysUnder(c, "z"); !slices.Equal(got, []string{"ns/c"}) {
		t.Fatalf("after a relisting z has %v", got)
	}
}

func TestByIndexOfAnIndexNeverAdded(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("ByIndex of an unknown index answered instead of panicking")
		}
	}()
	newItemCache().ByIndex("owner", "x")
}
