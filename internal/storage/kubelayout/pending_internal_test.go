package kubelayout

import "testing"

// TestPendingWrite: a write still in flight is known by its stored bytes
// only, and forgotten once settled.
func TestPendingWrite(t *testing.T) {
	d := newDecodedValues()
	p := d.expect("/registry/configmaps/ns/a", []byte("k8s\x00one"), []byte(`{"a":1}`))
	if v, ok := d.getPending("/registry/configmaps/ns/a", []byte("k8s\x00one")); !ok || string(v) != `{"a":1}` {
		t.Fatalf("pending = %q, %v", v, ok)
	}
	if _, ok := d.getPending("/registry/configmaps/ns/a", []byte("k8s\x00two")); ok {
		t.Fatal("other bytes matched the pending write")
	}
	later := d.expect("/registry/configmaps/ns/a", []byte("k8s\x00two"), []byte(`{"a":2}`))
	d.settle("/registry/configmaps/ns/a", p) // replaced: the later write stays
	if v, ok := d.getPending("/registry/configmaps/ns/a", []byte("k8s\x00two")); !ok || string(v) != `{"a":2}` {
		t.Fatalf("later pending = %q, %v", v, ok)
	}
	d.settle("/registry/configmaps/ns/a", later)
	if _, ok := d.getPending("/registry/configmaps/ns/a", []byte("k8s\x00two")); ok {
		t.Fatal("a settled write is still pending")
	}
}
