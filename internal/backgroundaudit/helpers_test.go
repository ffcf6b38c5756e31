package backgroundaudit

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// env is a store with the server's policy snapshot, params and namespaces
// over it, as internal/server wires them; objects are written straight
// into storage (defaulted as the API would), without admission.
type env struct {
	t     *testing.T
	store storage.Store
	cat   *registry.Catalogue
	cfgs  *admissionsource.PolicyConfigs
}

func newEnv(t *testing.T, store storage.Store) *env {
	t.Helper()
	cat := registry.NewCatalogue()
	return &env{t: t, store: store, cat: cat, cfgs: admissionsource.NewPolicyConfigs(store, cat)}
}

func newMemoryEnv(t *testing.T) *env { return newEnv(t, memory.New()) }

// scanner returns a scanner of e without pauses.
func (e *env) scanner(o Options) *Scanner {
	e.t.Helper()
	o.Store, o.Catalogue, o.Policies = e.store, e.cat, e.cfgs
	o.Params = admissionsource.NewParamLookup(e.store, e.cat)
	o.Namespaces = admissionsource.NewNamespaceLookup(e.store, e.cat)
	o.Schema = admissionsource.NewSchema(e.cat)
	if o.Pause == 0 {
		o.Pause = -1
	}
	s, err := New(o)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// apply writes each YAML document of docs (create or replace), then
// reloads the policy snapshot.
func (e *env) apply(docs string) {
	e.t.Helper()
	ctx := context.Background()
	for _, doc := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		e.put(ctx, e.decode(doc))
	}
	if err := e.cfgs.Reload(ctx); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) decode(doc string) runtime.Object {
	e.t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		e.t.Fatalf("%v in %s", err, doc)
	}
	res, ok := e.cat.LookupKind(u.GroupVersionKind())
	if !ok {
		e.t.Fatalf("no resource for %v", u.GroupVersionKind())
	}
	obj, err := layout.NewObject(res)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		e.t.Fatal(err)
	}
	res.Default(obj)
	return obj
}

func (e *env) put(ctx context.Context, obj runtime.Object) {
	e.t.Helper()
	res, _ := e.cat.LookupKind(obj.GetObjectKind().GroupVersionKind())
	m, err := meta.Accessor(obj)
	if err != nil {
		e.t.Fatal(err)
	}
	if m.GetUID() == "" {
		m.SetUID(types.UID("uid-" + m.GetNamespace() + "-" + m.GetName()))
	}
	b, err := layout.Encode(obj)
	if err != nil {
		e.t.Fatal(err)
	}
	key := layout.Key(res, m.GetNamespace(), m.GetName())
	if _, err := e.store.Create(ctx, key, b); errors.Is(err, storage.ErrKeyExists) {
		_, err = e.store.Update(ctx, key, b, 0)
		if err != nil {
			e.t.Fatal(err)
		}
	} else if err != nil {
		e.t.Fatal(err)
	}
}

// pageCountingStore records the largest page a List under prefix returned.
type pageCountingStore struct {
	storage.Store
	prefix string

	mu                 sync.Mutex
	largest, unlimited int
}

func (s *pageCountingStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	res, err := s.Store.List(ctx, prefix, opts)
	if strings.HasPrefix(prefix, s.prefix) {
		s.mu.Lock()
		s.largest = max(s.largest, len(res.Items))
		if opts.Limit == 0 {
			s.unlimited++
		}
		s.mu.Unlock()
	}
	return res, err
}

// violators are the objects of a binding's violations, as
// "namespace/name", in the order found.
func violators(r *Results, policy, binding string) []string {
	for _, br := range r.Bindings {
		if br.Policy == policy && br.Binding == binding {
			out := []string{}
			for _, f := range br.Violations {
				out = append(out, f.Object.Namespace+"/"+f.Object.Name)
			}
			return out
		}
	}
	return nil
}

func bindingNames(r *Results) []string {
	var out []string
	for _, br := range r.Bindings {
		out = append(out, br.Policy+"/"+br.Binding)
	}
	return out
}
