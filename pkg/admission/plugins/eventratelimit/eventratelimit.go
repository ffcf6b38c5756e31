// Package eventratelimit is the EventRateLimit admission plugin: it refuses
// core Event writes (CREATE and UPDATE of kind Event in the core group) with
// 429 Too Many Requests once a token bucket is empty. Its configuration
// (eventratelimit.admission.k8s.io/v1alpha1 Configuration) sets one or more
// limits, each a bucket for the whole server, or buckets per namespace, per
// user or per event source and involved object, kept in an LRU cache.
//
// As upstream, events.k8s.io Events (kind Event of another group) and
// dry-run requests are never limited; the buckets are this server's own.
package eventratelimit

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/eventratelimit/v1alpha1"
)

// Name is the upstream plugin name.
const Name = "EventRateLimit"

// defaultCacheSize is the number of buckets of a limit without cacheSize.
const defaultCacheSize = 4096

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		c, err := LoadConfiguration(pc.Config)
		if err != nil {
			return nil, err
		}
		if errs := Validate(c); len(errs) > 0 {
			return nil, errs.ToAggregate()
		}
		return New(c, clock.RealClock{}), nil
	})
}

// Plugin is the EventRateLimit plugin.
type Plugin struct {
	limits []*limit
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin for a valid configuration, its buckets refilled by
// clk.
func New(c *v1alpha1.Configuration, clk flowcontrol.Clock) *Plugin {
	p := &Plugin{}
	for _, l := range c.Limits {
		p.limits = append(p.limits, newLimit(l, clk))
	}
	return p
}

// Handles CREATE and UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate takes a token from the bucket of every limit; the request is
// refused when any bucket was empty, naming each.
func (p *Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	if a.Kind.Group != "" || a.Kind.Kind != "Event" || a.DryRun {
		return nil
	}
	var errs []error
	for _, l := range p.limits {
		if err := l.accept(a); err != nil {
			errs = append(errs, err)
		}
	}
	if err := utilerrors.NewAggregate(errs); err != nil {
		return apierrors.NewTooManyRequestsError(err.Error())
	}
	return nil
}

// limit is one configured limit: its buckets and how a request picks one.
type limit struct {
	typ v1alpha1.LimitType
	key func(*admission.Attributes) string

	server flowcontrol.RateLimiter // the one bucket of a Server limit

	mu      sync.Mutex
	buckets *lru.Cache // key -> flowcontrol.RateLimiter
	bucket  func() flowcontrol.RateLimiter
}

func newLimit(c v1alpha1.Limit, clk flowcontrol.Clock) *limit {
	bucket := func() flowcontrol.RateLimiter {
		return flowcontrol.NewTokenBucketRateLimiterWithClock(float32(c.QPS), int(c.Burst), clk)
	}
	l := &limit{typ: c.Type, bucket: bucket}
	switch c.Type {
	case v1alpha1.ServerLimitType:
		l.server = bucket()
		l.key = func(*admission.Attributes) string { return "" }
		return l
	case v1alpha1.NamespaceLimitType:
		l.key = func(a *admission.Attributes) string { return a.Namespace }
	case v1alpha1.UserLimitType:
		l.key = func(a *admission.Attributes) string { return a.UserInfo.Username }
	default: // SourceAndObject (Validate refuses any other type)
		l.key = sourceAndObjectKey
	}
	size := int(c.CacheSize)
	if size == 0 {
		size = defaultCacheSize
	}
	l.buckets = lru.New(size)
	return l
}

func (l *limit) accept(a *admission.Attributes) error {
	key := l.key(a)
	if !l.get(key).TryAccept() {
		return fmt.Errorf("limit reached on type %v for key %v", l.typ, key)
	}
	return nil
}

// get returns the bucket of key, a full new one when it is not cached.
func (l *limit) get(key string) flowcontrol.RateLimiter {
	if l.server != nil {
		return l.server
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets.Get(key); ok {
		return b.(flowcontrol.RateLimiter)
	}
	b := l.bucket()
	l.buckets.Add(key, b)
	return b
}

// sourceAndObjectKey is the event's source and involved object, their
// fields concatenated without separator as upstream does.
func sourceAndObjectKey(a *admission.Attributes) string {
	e, ok := a.Object.(*corev1.Event)
	if !ok {
		return ""
	}
	return strings.Join([]string{
		e.Source.Component,
		e.Source.Host,
		e.InvolvedObject.Kind,
		e.InvolvedObject.Namespace,
		e.InvolvedObject.Name,
		string(e.InvolvedObject.UID),
		e.InvolvedObject.APIVersion,
	}, "")
}
