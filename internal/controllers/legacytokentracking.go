package controllers

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/pkg/storage"
)

// The ConfigMap that says since when kube-apiserver tracks the use of
// legacy service account tokens (the day, UTC), as upstream's
// legacy-token-tracking controller keeps it: the legacy token cleaner of
// kube-controller-manager only marks tokens unused since then.
const (
	LegacyTokenTrackingConfigMap = "kube-apiserver-legacy-service-account-token-tracking"
	legacyTokenTrackingSinceKey  = "since"
	legacyTokenTrackingDate      = "2006-01-02"
)

// LegacyTokenTracking creates the ConfigMap when it is missing (at most
// once in 30 minutes, as upstream's), and writes today's date into it when
// what it holds is not a date; it syncs at start and on every change of
// the ConfigMap.
type LegacyTokenTracking struct {
	store   storage.Store
	client  dynamic.ResourceInterface
	creates *rate.Limiter
	queue   workqueue.TypedRateLimitingInterface[string]
	now     func() time.Time
	log     *slog.Logger
}

// NewLegacyTokenTracking returns the controller, reading store and
// writing through rt (the loopback transport of the API server's user).
func NewLegacyTokenTracking(store storage.Store, rt http.RoundTripper, log *slog.Logger) (*LegacyTokenTracking, error) {
	client, err := newAPIServerClient(rt)
	if err != nil {
		return nil, err
	}
	return &LegacyTokenTracking{store: store, client: client.Resource(configMapsGVR).Namespace(metav1.NamespaceSystem),
		creates: rate.NewLimiter(rate.Every(30*time.Minute), 1),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "legacy_token_tracking_controller"}),
		now: time.Now, log: log}, nil
}

// Run follows the ConfigMap and syncs it until ctx ends.
func (c *LegacyTokenTracking) Run(ctx context.Context) {
	key := configMapsPrefix + metav1.NamespaceSystem + "/" + LegacyTokenTrackingConfigMap
	runQueue(ctx, c.store, key, queueAll{c.queue}, c.queue, func(ctx context.Context, _ string) error { return c.Sync(ctx) },
		c.log, "syncing the legacy token tracking ConfigMap", "key")
}

// Sync brings the ConfigMap to hold a date.
func (c *LegacyTokenTracking) Sync(ctx context.Context) error {
	now := c.now()
	today := now.UTC().Format(legacyTokenTrackingDate)
	u, err := c.client.Get(ctx, LegacyTokenTrackingConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		r := c.creates.ReserveN(now, 1)
		if delay := r.DelayFrom(now); delay > 0 {
			r.CancelAt(now)
			c.queue.AddAfter("", delay)
			return nil
		}
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: LegacyTokenTrackingConfigMap, Namespace: metav1.NamespaceSystem},
			Data:       map[string]string{legacyTokenTrackingSinceKey: today}}
		err := createTyped(ctx, c.client, cm)
		if err != nil && !apierrors.IsAlreadyExists(err) {
			r.CancelAt(now)
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cm); err != nil {
		return err
	}
	if _, err := time.Parse(legacyTokenTrackingDate, cm.Data[legacyTokenTrackingSinceKey]); err == nil {
		return nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[legacyTokenTrackingSinceKey] = today
	return updateRead(ctx, c.client, cm)
}
