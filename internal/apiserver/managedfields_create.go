package apiserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

// createdFields remembers what a create records in managedFields, so that
// a create like an earlier one skips the structured-merge-diff walk (a
// third of a small create's CPU).
//
// What the field manager records for a create (live is the empty object,
// the request carries no managedFields) depends only on the manager, on
// the object's content outside the metadata fields it never records
// (name, namespace, uid, resourceVersion, creationTimestamp, generation,
// selfLink: those paths are stripped from every field set, and so is
// their parent, metadata) and, of a string outside arrays, only on
// whether it equals the empty object's value at its path
// (managedfields_createkey.go). The entry's time is the only other input,
// and it is "now". So the key is the manager and the object's JSON with
// those metadata fields blank and those strings blanked, and a hit gives
// the remembered entries with the time set to now, as the field manager
// would: creates that differ only in such strings (events, config maps
// with other data, labels with other values) share an entry. The key is
// kept as its SHA-256, so that the cache holds neither object contents
// (secrets) nor much memory.
type createdFields struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte][]metav1.ManagedFieldsEntry

	// emptyStrings is where the resource's empty object holds strings,
	// found on the first create.
	emptyStrings atomic.Pointer[stringPaths]
}

// createdFieldsMax bounds the entries kept per resource; when full, the
// cache starts afresh.
const createdFieldsMax = 256

// record sets obj's managedFields as fm.UpdateNoErrors(empty, obj, manager)
// would, taking them from the cache when it can.
func (c *createdFields) record(fm *managedfields.FieldManager, empty, obj runtime.Object, manager string) runtime.Object {
	m := accessor(obj)
	if len(m.GetManagedFields()) != 0 {
		return fm.UpdateNoErrors(empty, obj, manager)
	}
	paths, ok := c.stringPaths(empty)
	if !ok {
		return fm.UpdateNoErrors(empty, obj, manager)
	}
	key, ok := createdFieldsKey(obj, m, manager, paths)
	if !ok {
		return fm.UpdateNoErrors(empty, obj, manager)
	}
	c.mu.Lock()
	remembered, hit := c.entries[key]
	c.mu.Unlock()
	if hit {
		m.SetManagedFields(stampedCopy(remembered, metav1.Time{Time: time.Now().UTC()}))
		return obj
	}
	obj = fm.UpdateNoErrors(empty, obj, manager)
	entries := accessor(obj).GetManagedFields()
	if len(entries) > 1 {
		return obj // a create from nothing records one manager; anything else is not remembered
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= createdFieldsMax {
		c.entries = map[[sha256.Size]byte][]metav1.ManagedFieldsEntry{}
	}
	c.entries[key] = stampedCopy(entries, metav1.Time{})
	c.mu.Unlock()
	return obj
}

// stringPaths returns where empty, the resource's empty object, holds
// strings.
func (c *createdFields) stringPaths(empty runtime.Object) (*stringPaths, bool) {
	if p := c.emptyStrings.Load(); p != nil {
		return p, true
	}
	p, ok := stringPathsOf(empty)
	if ok {
		c.emptyStrings.Store(p)
	}
	return p, ok
}

// createdFieldsKey hashes manager, a NUL, and obj's JSON with the metadata
// the field manager never records left blank and its strings outside
// arrays blanked (emptyStrings: where the empty object holds strings). obj
// is restored before return. An object whose JSON holds the
// escape \ufffd is not keyed: encoding/json writes every invalid UTF-8 byte
// so, where the field manager keeps the bytes.
func createdFieldsKey(obj runtime.Object, m metav1.Object, manager string, emptyStrings *stringPaths) (key [sha256.Size]byte, ok bool) {
	name, ns, uid, rv := m.GetName(), m.GetNamespace(), m.GetUID(), m.GetResourceVersion()
	created, generation, selfLink := m.GetCreationTimestamp(), m.GetGeneration(), m.GetSelfLink()
	m.SetName("")
	m.SetNamespace("")
	m.SetUID("")
	m.SetResourceVersion("")
	m.SetCreationTimestamp(metav1.Time{})
	m.SetGeneration(0)
	m.SetSelfLink("")
	data, err := json.Marshal(obj)
	m.SetName(name)
	m.SetNamespace(ns)
	m.SetUID(uid)
	m.SetResourceVersion(rv)
	m.SetCreationTimestamp(created)
	m.SetGeneration(generation)
	m.SetSelfLink(selfLink)
	if err != nil || bytes.Contains(data, []byte(`\ufffd`)) {
		return key, false
	}
	if data, ok = blankStrings(data, emptyStrings); !ok {
		return key, false
	}
	h := sha256.New()
	h.Write([]byte(manager))
	h.Write([]byte{0})
	h.Write(data)
	h.Sum(key[:0])
	return key, true
}

// stampedCopy copies entries (their field sets too) with every time set to t,
// or cleared when t is zero.
func stampedCopy(entries []metav1.ManagedFieldsEntry, t metav1.Time) []metav1.ManagedFieldsEntry {
	if len(entries) == 0 {
		return nil
	}
	out := make([]metav1.ManagedFieldsEntry, len(entries))
	for i, e := range entries {
		out[i] = e
		out[i].Time = nil
		if !t.IsZero() {
			stamp := t
			out[i].Time = &stamp
		}
		if e.FieldsV1 != nil {
			out[i].FieldsV1 = &metav1.FieldsV1{Raw: append([]byte(nil), e.FieldsV1.Raw...)}
		}
	}
	return out
}
