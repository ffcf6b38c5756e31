package controllers

import (
	"context"
	"strings"
	"sync"

	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/pkg/storage"
)

// firstPass tells when a controller has tried, once each, the keys of its
// first list: the writes a cluster's controllers make as soon as they
// start (kube-root-ca.crt and the default ServiceAccount in every
// namespace), which a client starting after them never sees. A try that
// fails counts: a webhook refusing the write must not hold the wait.
type firstPass struct {
	mu      sync.Mutex
	listed  bool
	pending map[string]bool
	closed  bool
	done    chan struct{}
}

func newFirstPass() *firstPass { return &firstPass{done: make(chan struct{})} }

// Done is closed once every key of the first list has been tried.
func (p *firstPass) Done() <-chan struct{} { return p.done }

// list records the keys of the first list; later lists (after a watch
// failed) are not waited for.
func (p *firstPass) list(keys []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listed {
		return
	}
	p.listed = true
	p.pending = make(map[string]bool, len(keys))
	for _, k := range keys {
		p.pending[k] = true
	}
	p.closeIfTried()
}

// tried marks key as tried once.
func (p *firstPass) tried(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending[key] {
		delete(p.pending, key)
		p.closeIfTried()
	}
}

func (p *firstPass) closeIfTried() {
	if p.listed && len(p.pending) == 0 && !p.closed {
		p.closed = true
		close(p.done)
	}
}

// syncing wraps sync so that each call marks its key tried.
func (p *firstPass) syncing(sync func(context.Context, string) error) func(context.Context, string) error {
	return func(ctx context.Context, key string) error {
		err := sync(ctx, key)
		p.tried(key)
		return err
	}
}

// FirstPasser is a controller that says when it has tried the keys of its
// first list.
type FirstPasser interface{ FirstPassDone() <-chan struct{} }

// queueNamespaces queues the namespaces among items (a list of the core
// group), recording them as the first pass's keys if it is the first list.
func queueNamespaces(queue workqueue.TypedRateLimitingInterface[string], first *firstPass, items []storage.KeyValue) {
	var names []string
	for _, kv := range items {
		if ns, ok := strings.CutPrefix(kv.Key, namespacesPrefix); ok {
			names = append(names, ns)
		}
	}
	first.list(names)
	for _, ns := range names {
		queue.Add(ns)
	}
}
