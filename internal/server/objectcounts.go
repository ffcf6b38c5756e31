package server

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// DefaultObjectCountPollPeriod is kube-apiserver's
// --etcd-count-metric-poll-period default.
const DefaultObjectCountPollPeriod = time.Minute

// objectCounts are kube-apiserver's apiserver_resource_objects: how many
// objects of each stored resource storage held when last counted, -1 when
// counting failed. Upstream counts every period from each resource's
// store; so does this, from the keys under each resource's prefix. (Its
// deprecated twin apiserver_storage_objects is hidden in 1.37.)
type objectCounts struct {
	store   storage.Store
	cat     *registry.Catalogue
	objects *prometheus.GaugeVec
	// counted are the resources the last count set series for, so that
	// those of a resource no longer served (a deleted CRD) go.
	counted map[schema.GroupResource]bool
}

func newObjectCounts(reg prometheus.Registerer, store storage.Store, cat *registry.Catalogue) *objectCounts {
	c := &objectCounts{store: store, cat: cat, counted: map[schema.GroupResource]bool{},
		objects: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_resource_objects",
			Help: "[ALPHA] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1."},
			[]string{"group", "resource"}),
	}
	reg.MustRegister(c.objects)
	return c
}

// run counts now and then every period (jittered by up to 10% as
// upstream's poll) until ctx ends; a period of 0 or less counts nothing,
// as upstream's flag.
func (c *objectCounts) run(ctx context.Context, period time.Duration) {
	if period <= 0 {
		return
	}
	for {
		c.count(ctx)
		jitter := time.Duration(rand.Int64N(int64(period)/10 + 1))
		select {
		case <-ctx.Done():
			return
		case <-time.After(period + jitter):
		}
	}
}

// count sets every stored resource's series from one count of its keys.
func (c *objectCounts) count(ctx context.Context) {
	seen := map[schema.GroupResource]bool{}
	for _, res := range storedResources(c.cat) {
		gr := res.GroupResource()
		if seen[gr] {
			continue
		}
		seen[gr] = true
		n, err := countKeys(ctx, c.store, layout.ResourcePrefix(res))
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			n = -1
		}
		c.objects.WithLabelValues(gr.Group, gr.Resource).Set(float64(n))
	}
	for gr := range c.counted {
		if !seen[gr] {
			c.objects.DeleteLabelValues(gr.Group, gr.Resource)
		}
	}
	c.counted = seen
}

// storedResources are the resources with a store of their own: those
// that can be created and listed (not reviews, nor componentstatuses,
// which are made up when read), but for those stored as another group's
// (events.k8s.io's events are core events, counted once as upstream).
func storedResources(cat *registry.Catalogue) []*registry.Resource {
	var out []*registry.Resource
	for _, res := range cat.Resources() {
		if res.StoredAs == nil && slices.Contains(res.Verbs, "list") && slices.Contains(res.Verbs, "create") {
			out = append(out, res)
		}
	}
	return out
}

// countKeys counts the keys under prefix without reading their values:
// a page of one key and the count of the rest.
func countKeys(ctx context.Context, store storage.Store, prefix string) (int64, error) {
	page, err := store.List(ctx, prefix, storage.ListOptions{Limit: 1, HaveValue: func(string, int64) bool { return true }})
	if err != nil {
		return 0, err
	}
	return int64(len(page.Items)) + page.RemainingCount, nil
}
