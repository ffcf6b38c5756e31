package resourcequota

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/pkg/admission"
)

// quotaAccess reads the quotas of a namespace from the cache and writes
// their status. The copy it last wrote of a quota stands in for the cached
// one until the cache shows that version or a newer one.
type quotaAccess struct {
	cache  admission.ObjectCache
	status admission.StatusUpdater

	mu      sync.Mutex
	written map[quotaKey]*corev1.ResourceQuota
}

// quotaKey names a quota.
type quotaKey struct{ namespace, name string }

// maxWritten bounds the copies remembered (upstream keeps 100).
const maxWritten = 1000

func newQuotaAccess(cache admission.ObjectCache, status admission.StatusUpdater) *quotaAccess {
	return &quotaAccess{cache: cache, status: status, written: map[quotaKey]*corev1.ResourceQuota{}}
}

// list returns the quotas of ns, by name. They share their maps with the
// cache: callers replace, never modify, them.
func (q *quotaAccess) list(ctx context.Context, ns string) ([]corev1.ResourceQuota, error) {
	objs, err := q.cache.ListCachedObjects(ctx, quotasResource, ns, nil)
	if err != nil {
		return nil, fmt.Errorf("error resolving quota: %v", err)
	}
	out := make([]corev1.ResourceQuota, 0, len(objs))
	for _, o := range objs {
		rq, ok := o.(*corev1.ResourceQuota)
		if !ok {
			continue
		}
		out = append(out, *q.newest(rq))
	}
	return out, nil
}

// newest returns the copy written last when it is newer than cached.
func (q *quotaAccess) newest(cached *corev1.ResourceQuota) *corev1.ResourceQuota {
	key := quotaKey{cached.Namespace, cached.Name}
	q.mu.Lock()
	defer q.mu.Unlock()
	w, ok := q.written[key]
	if !ok {
		return cached
	}
	if newerThan(w.ResourceVersion, cached.ResourceVersion) {
		return w
	}
	delete(q.written, key)
	return cached
}

// newerThan reports whether resource version written comes after cached,
// both read as numbers; unreadable versions are never newer.
func newerThan(written, cached string) bool {
	w, err1 := strconv.ParseUint(written, 10, 64)
	c, err2 := strconv.ParseUint(cached, 10, 64)
	return err1 == nil && err2 == nil && w > c
}

// updateStatus writes rq's status and remembers the stored copy.
func (q *quotaAccess) updateStatus(ctx context.Context, rq *corev1.ResourceQuota) error {
	obj, err := q.status.UpdateObjectStatus(ctx, quotasResource, rq.Namespace, rq)
	if err != nil {
		return err
	}
	stored, ok := obj.(*corev1.ResourceQuota)
	if !ok {
		return nil
	}
	q.mu.Lock()
	if len(q.written) >= maxWritten {
		clear(q.written) // quotas deleted before the cache caught up
	}
	q.written[quotaKey{rq.Namespace, rq.Name}] = stored
	q.mu.Unlock()
	return nil
}
