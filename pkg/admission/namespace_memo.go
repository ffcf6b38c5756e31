package admission

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// namespaceMemoKey stores the memo among the per-request plugin values; the
// NUL byte keeps it apart from any plugin's key.
const namespaceMemoKey = "\x00namespace"

// namespaceMemo remembers the one namespace read for a request.
type namespaceMemo struct {
	once sync.Once
	name string
	ns   *corev1.Namespace
	err  error
}

// Namespace returns the namespace called name through lookup, reading it at
// most once per request: the first result (error included) is remembered and
// shared by every plugin, webhook and policy that selects by namespace
// labels. A later call for another name is passed through unremembered.
func (r *Record) Namespace(ctx context.Context, name string, lookup NamespaceLookup) (*corev1.Namespace, error) {
	r.mu.Lock()
	m, _ := r.reinvoke.values[namespaceMemoKey].(*namespaceMemo)
	if m == nil {
		m = &namespaceMemo{name: name}
		if r.reinvoke.values == nil {
			r.reinvoke.values = map[string]any{}
		}
		r.reinvoke.values[namespaceMemoKey] = m
	}
	r.mu.Unlock()
	if m.name != name {
		return lookup.GetNamespace(ctx, name)
	}
	m.once.Do(func() { m.ns, m.err = lookup.GetNamespace(ctx, name) })
	return m.ns, m.err
}
