package storagetest

import (
	"fmt"
	"testing"

	"github.com/admitd/admitd/pkg/storage"
)

type stepOp string

const (
	opGet    stepOp = "Get"
	opCreate stepOp = "Create"
	opUpdate stepOp = "Update"
	opDelete stepOp = "Delete"
)

// step is one call on a fresh store. For a successful call, want is the
// returned KeyValue (for Delete, the deleted one). After every step the
// revision must have grown by one if the call was a successful write, and
// not at all otherwise.
type step struct {
	op       stepOp
	key      string
	value    string
	expected int64 // expectedRevision of Update and Delete
	wantErr  error
	want     storage.KeyValue
}

func kv(key, value string, create, mod int64) storage.KeyValue {
	return storage.KeyValue{Key: key, Value: []byte(value), CreateRevision: create, ModRevision: mod}
}

var stepCases = []struct {
	name  string
	steps []step
}{
	{"CreateGet", []step{
		{op: opGet, key: "/a", wantErr: storage.ErrNotFound},
		{op: opCreate, key: "/a", value: "1", want: kv("/a", "1", 1, 1)},
		{op: opGet, key: "/a", want: kv("/a", "1", 1, 1)},
		{op: opCreate, key: "/b", value: "2", want: kv("/b", "2", 2, 2)},
		{op: opCreate, key: "/a", value: "again", wantErr: storage.ErrKeyExists},
		{op: opGet, key: "/a", want: kv("/a", "1", 1, 1)},
		{op: opGet, key: "/b", want: kv("/b", "2", 2, 2)},
		{op: opGet, key: "/c", wantErr: storage.ErrNotFound},
		{op: opGet, key: "/a/", wantErr: storage.ErrNotFound},
	}},
	{"UpdateCAS", []step{
		{op: opCreate, key: "/a", value: "1", want: kv("/a", "1", 1, 1)},
		{op: opCreate, key: "/b", value: "1", want: kv("/b", "1", 2, 2)},
		{op: opUpdate, key: "/a", value: "2", expected: 0, want: kv("/a", "2", 1, 3)},
		{op: opUpdate, key: "/a", value: "3", expected: 3, want: kv("/a", "3", 1, 4)},
		{op: opUpdate, key: "/a", value: "stale", expected: 3, wantErr: storage.ErrConflict},
		{op: opUpdate, key: "/a", value: "stale", expected: 1, wantErr: storage.ErrConflict},
		{op: opUpdate, key: "/a", value: "future", expected: 99, wantErr: storage.ErrConflict},
		{op: opGet, key: "/a", want: kv("/a", "3", 1, 4)},
		{op: opUpdate, key: "/b", value: "same", expected: 2, want: kv("/b", "same", 2, 5)},
		{op: opUpdate, key: "/b", value: "same", expected: 5, want: kv("/b", "same", 2, 6)},
		{op: opUpdate, key: "/missing", value: "x", expected: 0, wantErr: storage.ErrNotFound},
		{op: opUpdate, key: "/missing", value: "x", expected: 6, wantErr: storage.ErrNotFound},
	}},
	{"DeleteCAS", []step{
		{op: opCreate, key: "/a", value: "1", want: kv("/a", "1", 1, 1)},
		{op: opUpdate, key: "/a", value: "2", want: kv("/a", "2", 1, 2)},
		{op: opDelete, key: "/a", expected: 1, wantErr: storage.ErrConflict},
		{op: opGet, key: "/a", want: kv("/a", "2", 1, 2)},
		{op: opDelete, key: "/a", expected: 2, want: kv("/a", "2", 1, 2)},
		{op: opGet, key: "/a", wantErr: storage.ErrNotFound},
		{op: opDelete, key: "/a", expected: 0, wantErr: storage.ErrNotFound},
		{op: opDelete, key: "/a", expected: 2, wantErr: storage.ErrNotFound},
		{op: opUpdate, key: "/a", value: "x", wantErr: storage.ErrNotFound},
		{op: opCreate, key: "/a", value: "again", want: kv("/a", "again", 4, 4)},
		{op: opDelete, key: "/a", expected: 0, want: kv("/a", "again", 4, 4)},
		{op: opDelete, key: "/never", expected: 0, wantErr: storage.ErrNotFound},
	}},
	{"RevisionOnlyOnSuccess", []step{
		{op: opCreate, key: "/x", value: "1", want: kv("/x", "1", 1, 1)},
		{op: opCreate, key: "/x", value: "1", wantErr: storage.ErrKeyExists},
		{op: opUpdate, key: "/x", value: "2", expected: 7, wantErr: storage.ErrConflict},
		{op: opDelete, key: "/x", expected: 7, wantErr: storage.ErrConflict},
		{op: opDelete, key: "/y", wantErr: storage.ErrNotFound},
		{op: opCreate, key: "/y", value: "1", want: kv("/y", "1", 2, 2)},
		{op: opUpdate, key: "/x", value: "2", expected: 1, want: kv("/x", "2", 1, 3)},
		{op: opDelete, key: "/y", expected: 2, want: kv("/y", "1", 2, 2)},
		{op: opCreate, key: "/y", value: "2", want: kv("/y", "2", 5, 5)},
	}},
}

// runSteps runs steps in order, checking each result and the revision.
func runSteps(t *testing.T, s storage.Store, steps []step) {
	ctx := t.Context()
	for i, st := range steps {
		before := mustRevision(t, s)
		var (
			got storage.KeyValue
			rev int64
			err error
		)
		switch st.op {
		case opGet:
			got, err = s.Get(ctx, st.key)
		case opCreate:
			got, err = s.Create(ctx, st.key, []byte(st.value))
			rev = got.ModRevision
		case opUpdate:
			got, err = s.Update(ctx, st.key, []byte(st.value), st.expected)
			rev = got.ModRevision
		case opDelete:
			got, rev, err = s.Delete(ctx, st.key, st.expected)
		}
		call := fmt.Sprintf("step %d: %s(%q, %q, %d)", i, st.op, st.key, st.value, st.expected)
		if !isErr(err, st.wantErr) {
			t.Fatalf("%s error = %v, want %v", call, err, st.wantErr)
		}
		if err == nil && !equalKV(got, st.want) {
			t.Errorf("%s = %s, want %s", call, fmtKV(got), fmtKV(st.want))
		}
		want := before
		if err == nil && st.op != opGet {
			want++
			if rev != want {
				t.Errorf("%s returned revision %d, want %d", call, rev, want)
			}
		}
		if after := mustRevision(t, s); after != want {
			t.Errorf("after %s: Revision() = %d, want %d", call, after, want)
		}
	}
}

// testValuesAreCopied checks that callers and the store never share value
// memory: changing a slice passed in or handed out changes nothing stored.
func testValuesAreCopied(t *testing.T, s storage.Store) {
	ctx := t.Context()
	in := []byte("abc")
	if _, err := s.Create(ctx, "/v", in); err != nil {
		t.Fatalf("Create error = %v", err)
	}
	in[0] = 'X'
	got, err := s.Get(ctx, "/v")
	if err != nil || string(got.Value) != "abc" {
		t.Fatalf("Get after changing the Create input = %s, %v; want value \"abc\"", fmtKV(got), err)
	}
	got.Value[0] = 'Y'
	listed := mustList(t, s, "/", storage.ListOptions{})
	listed.Items[0].Value[1] = 'Z'

	up := []byte("def")
	if _, err := s.Update(ctx, "/v", up, 0); err != nil {
		t.Fatalf("Update error = %v", err)
	}
	up[0] = 'X'
	prev, _, err := s.Delete(ctx, "/v", 0)
	if err != nil || string(prev.Value) != "def" {
		t.Fatalf("Delete after changing the Update input = %s, %v; want value \"def\"", fmtKV(prev), err)
	}
	old := mustList(t, s, "/", storage.ListOptions{Revision: 1})
	if len(old.Items) != 1 || string(old.Items[0].Value) != "abc" {
		t.Errorf("List at revision 1 = %s, want value \"abc\" (a returned value was changed)", fmtKVs(old.Items))
	}
}

func testEmptyValue(t *testing.T, s storage.Store) {
	for i, value := range [][]byte{nil, {}} {
		key := fmt.Sprintf("/empty/%d", i)
		if _, err := s.Create(t.Context(), key, value); err != nil {
			t.Fatalf("Create(%q, %#v) error = %v", key, value, err)
		}
		got, err := s.Get(t.Context(), key)
		if err != nil || len(got.Value) != 0 {
			t.Errorf("Get(%q) = %s, %v; want an empty value", key, fmtKV(got), err)
		}
	}
}
