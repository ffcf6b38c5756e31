package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// systemNamespaces exist in every cluster from the start.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// Bootstrap creates what a fresh cluster has: the system namespaces and
// their "default" service accounts (which the service-account controller
// creates for every later namespace; writing these here keeps a fresh
// server idle until its first request). Existing objects are left alone.
func (s *Server) Bootstrap(ctx context.Context) error {
	var namespaces, accounts []runtime.Object
	for _, name := range systemNamespaces {
		namespaces = append(namespaces,
			&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}})
		accounts = append(accounts, &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}})
	}
	if err := s.EnsureObjects(ctx, KubeAPIServerManager, nil, namespaces...); err != nil {
		return err
	}
	// the service account controller's, which admitd runs in-process
	if err := s.EnsureObjects(ctx, "kube-controller-manager", nil, accounts...); err != nil {
		return err
	}
	if err := s.seedNodePorts(ctx); err != nil {
		return err
	}
	return s.SyncCustomResources(ctx)
}

// KubeAPIServerManager is the field manager of what kube-apiserver writes
// itself (its loopback client's user agent).
const KubeAPIServerManager = "kube-apiserver"

// bootstrapObject stores obj, defaulted, its fields recorded as manager's
// (an update, as the create of a loopback client), and prepared, unless it
// exists (storage.ErrKeyExists, which ensureObject turns into a
// reconcile).
func (s *Server) bootstrapObject(ctx context.Context, res *registry.Resource, obj runtime.Object, manager string) error {
	if res.Strategy.Default != nil {
		res.Strategy.Default(obj)
	}
	obj = s.recordBootstrapCreate(res, obj, manager)
	m := accessor(obj)
	s.fillSystemFields(res, m)
	registry.PrepareForCreate(res, obj)
	data, err := layout.Encode(obj)
	if err != nil {
		return err
	}
	_, err = s.store.Create(ctx, layout.Key(res, m.GetNamespace(), m.GetName()), data)
	return err
}

// Reconcile returns what to store in place of existing, an object that
// EnsureObjects found already stored where it would have created expected,
// or nil to leave it. It may modify and return existing.
type Reconcile func(existing, expected runtime.Object) runtime.Object

// EnsureObjects stores each of objs, defaulted and prepared, their fields
// recorded in managedFields as manager's, unless an
// object of its kind and name exists; then, with a reconcile function,
// whatever it returns replaces the stored object (compare-and-swap,
// retried on conflict). Each of objs must carry its apiVersion and kind;
// they are written concurrently, in no particular order, and an error of
// one does not stop the others. Like Bootstrap, it writes to storage
// directly: no admission, no
// observers (reload the caches that read these objects afterwards).
func (s *Server) EnsureObjects(ctx context.Context, manager string, reconcile Reconcile, objs ...runtime.Object) error {
	resources := make([]*registry.Resource, len(objs))
	for i, obj := range objs {
		gvk := obj.GetObjectKind().GroupVersionKind()
		res, ok := s.cat.LookupKind(gvk)
		if !ok {
			return fmt.Errorf("no resource serves %v", gvk)
		}
		resources[i] = res
	}
	// Concurrently: the store commits writes that wait together in one
	// sync, where one at a time each waits for its own (a fresh server
	// writes a few hundred objects here).
	errs := make([]error, len(objs))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(ensureWorkers, len(objs)) {
		wg.Go(func() {
			for i := range work {
				errs[i] = s.ensureObject(ctx, resources[i], objs[i], manager, reconcile)
			}
		})
	}
	for i := range objs {
		work <- i
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

// ensureWorkers is how many objects EnsureObjects writes at once.
const ensureWorkers = 32

// ensureObject stores obj unless an object of its name exists, which then
// reconcile (nil: none) may replace. It reads before it writes: on a
// restart everything exists, and a read costs a fraction of a refused
// create.
func (s *Server) ensureObject(ctx context.Context, res *registry.Resource, obj runtime.Object, manager string, reconcile Reconcile) error {
	m := accessor(obj)
	key := layout.Key(res, m.GetNamespace(), m.GetName())
	kv, err := s.store.Get(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		err = s.bootstrapObject(ctx, res, obj, manager)
		if !errors.Is(err, storage.ErrKeyExists) {
			return err
		}
		kv, err = s.store.Get(ctx, key) // created meanwhile by another server
	}
	if err != nil || reconcile == nil {
		return err
	}
	return s.reconcileObject(ctx, res, key, kv, obj, manager, reconcile)
}

// reconcileObject replaces kv, the stored object of expected's name, by
// what reconcile makes of it, if anything, the fields it changed recorded
// as manager's (compare-and-swap, read again and retried on conflict).
func (s *Server) reconcileObject(ctx context.Context, res *registry.Resource, key string, kv storage.KeyValue, expected runtime.Object, manager string, reconcile Reconcile) error {
	for attempt := 0; ; attempt++ {
		existing, err := layout.Decode(res, kv)
		if err != nil {
			return err
		}
		live := existing.DeepCopyObject() // reconcile may change existing
		next := reconcile(existing, expected)
		if next == nil {
			return nil
		}
		next = s.recordWrite(res, live, next, manager)
		data, err := layout.Encode(next)
		if err != nil {
			return err
		}
		_, err = s.store.Update(ctx, key, data, kv.ModRevision)
		if !errors.Is(err, storage.ErrConflict) || attempt >= 3 {
			return err
		}
		if kv, err = s.store.Get(ctx, key); err != nil {
			return err
		}
	}
}

// EnsureRecord names what EnsureObjectsRecorded keeps of its last run: a
// storage key outside the resources' and a fingerprint of the objects
// (with the reconcile logic's version) that changes when they change.
type EnsureRecord struct{ Key, Fingerprint string }

// ensureRecordPrefix starts the keys of the ensure records.
const ensureRecordPrefix = "/admitd/ensured/"

// ensuredObjects is an ensure record's stored value: the fingerprint it
// ran with and each object's revision once it had run.
type ensuredObjects struct {
	Fingerprint string           `json:"fingerprint"`
	Revisions   map[string]int64 `json:"revisions"`
}

// EnsureObjectsRecorded is EnsureObjects of what objs returns, skipped
// when it ran before with the same fingerprint and none of the objects
// has been written or deleted since: reconciling then changes nothing, so
// a restart neither builds the objects nor reads them. Reconcile must be
// idempotent (a second run on its own result changes nothing).
func (s *Server) EnsureObjectsRecorded(ctx context.Context, record EnsureRecord, manager string, reconcile Reconcile, objs func() ([]runtime.Object, error)) error {
	key := ensureRecordPrefix + record.Key
	prev, err := s.store.Get(ctx, key)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	if err == nil && s.unchangedSince(ctx, prev.Value, record.Fingerprint) {
		return nil
	}
	list, err := objs()
	if err != nil {
		return err
	}
	if err := s.EnsureObjects(ctx, manager, reconcile, list...); err != nil {
		return err
	}
	return s.writeEnsureRecord(ctx, key, prev, record.Fingerprint, list)
}

// unchangedSince reports whether data, a stored ensure record, has the
// fingerprint and every object it names still has its revision.
func (s *Server) unchangedSince(ctx context.Context, data []byte, fingerprint string) bool {
	var last ensuredObjects
	if json.Unmarshal(data, &last) != nil || last.Fingerprint != fingerprint || len(last.Revisions) == 0 {
		return false
	}
	for k, rev := range last.Revisions {
		kv, err := s.store.Get(ctx, k)
		if err != nil || kv.ModRevision != rev {
			return false
		}
	}
	return true
}

// writeEnsureRecord stores the record of a run over objs (compare-and-swap
// with prev, the record read before it; losing to another server's write
// is fine: theirs is as good).
func (s *Server) writeEnsureRecord(ctx context.Context, key string, prev storage.KeyValue, fingerprint string, objs []runtime.Object) error {
	rec := ensuredObjects{Fingerprint: fingerprint, Revisions: make(map[string]int64, len(objs))}
	for _, obj := range objs {
		res, _ := s.cat.LookupKind(obj.GetObjectKind().GroupVersionKind())
		m := accessor(obj)
		k := layout.Key(res, m.GetNamespace(), m.GetName())
		kv, err := s.store.Get(ctx, k)
		if err != nil {
			return err
		}
		rec.Revisions[k] = kv.ModRevision
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if prev.ModRevision == 0 {
		_, err = s.store.Create(ctx, key, data)
	} else {
		_, err = s.store.Update(ctx, key, data, prev.ModRevision)
	}
	if errors.Is(err, storage.ErrKeyExists) || errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}
