// Package legacytokencleaner is kube-controller-manager's legacy service
// account token cleaner (legacy-serviceaccount-token-cleaner-controller),
// as upstream's pkg/controller/serviceaccount
// (legacy_serviceaccount_token_cleaner.go). Once a day it looks at the
// Secrets of type kubernetes.io/service-account-token that are
// auto-generated legacy tokens — annotated with a ServiceAccount (and its
// uid, when given) that exists and lists the Secret in its secrets — and:
//
//   - leaves alone those created, or last used (the
//     kubernetes.io/legacy-token-last-used label kube-apiserver writes),
//     within the clean-up period, those being deleted, those whose
//     last-used label is not a date, and those a pod of their namespace
//     references;
//   - labels the others kubernetes.io/legacy-token-invalid-since=<today>
//     (a merge patch; kube-apiserver then refuses the token), unless that
//     label already holds a date;
//   - deletes those invalid since a day before the clean-up period began
//     (with the Secret's resourceVersion as precondition).
//
// It does nothing until the period has passed since the day after the
// date in the ConfigMap kube-system/kube-apiserver-legacy-service-account-token-tracking
// (since when kube-apiserver records last use), which it reads from the
// server each time. The period is kube-controller-manager's
// --legacy-service-account-token-clean-up-period (365 days).
//
// It reads Secrets, ServiceAccounts and Pods from the process's shared
// watch caches and writes as kube-controller-manager's
// legacy-service-account-token-cleaner service account, through
// admission. It records no events.
package legacytokencleaner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	applycorev1 "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "legacy-serviceaccount-token-cleaner-controller"

// User is kube-controller-manager's legacy-service-account-token-cleaner
// service account (bound to
// system:controller:legacy-service-account-token-cleaner).
var User = controllers.ControllerUser("legacy-service-account-token-cleaner")

// The labels on legacy token Secrets: the day kube-apiserver last
// accepted the token, and the day the cleaner declared it invalid.
const (
	LastUsedLabel     = "kubernetes.io/legacy-token-last-used"
	InvalidSinceLabel = "kubernetes.io/legacy-token-invalid-since"
)

const (
	// DefaultCleanUpPeriod is kube-controller-manager's
	// --legacy-service-account-token-clean-up-period.
	DefaultCleanUpPeriod = 365 * 24 * time.Hour
	// DefaultSyncInterval is the time between passes (upstream's, not a
	// flag).
	DefaultSyncInterval = 24 * time.Hour
	// dateLayout is the labels' and the ConfigMap's date format.
	dateLayout = "2006-01-02"
)

// The tracking ConfigMap kube-apiserver keeps.
const (
	trackingConfigMap = "kube-apiserver-legacy-service-account-token-tracking"
	trackingSinceKey  = "since"
)

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // reads the ConfigMap and writes as User
	Log       *slog.Logger
	// Caches are the watch caches shared with the process's other
	// controllers, started by their maker; nil means its own, started by
	// Run.
	Caches *controllers.Caches
	// CleanUpPeriod is how long a token must have been unused (and then
	// invalid) before it is labelled (deleted); it must be positive, as
	// kube-controller-manager refuses to start the controller otherwise.
	CleanUpPeriod time.Duration
	// SyncInterval is the time between passes; zero is
	// DefaultSyncInterval. Tests shorten it.
	SyncInterval time.Duration
	// Now is the clock; nil is time.Now. Tests move it on.
	Now func() time.Time
}

// Controller labels and deletes unused legacy service account tokens.
type Controller struct {
	client    kubernetes.Interface
	log       *slog.Logger
	period    time.Duration
	interval  time.Duration
	now       func() time.Time
	caches    *controllers.Caches
	ownCaches bool
	secrets   *watchcache.Cache[*corev1.Secret]
	accounts  *watchcache.Cache[*corev1.ServiceAccount]
	pods      *watchcache.Cache[*corev1.Pod]
}

// New returns the controller, or an error when the clean-up period is
// not positive.
func New(cfg Config) (*Controller, error) {
	if cfg.CleanUpPeriod <= 0 {
		return nil, fmt.Errorf("invalid clean-up period %v: it must be positive", cfg.CleanUpPeriod)
	}
	c := &Controller{client: cfg.Client, log: cfg.Log, period: cfg.CleanUpPeriod, interval: cfg.SyncInterval, now: cfg.Now, caches: cfg.Caches}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.interval <= 0 {
		c.interval = DefaultSyncInterval
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, c.log)
		c.ownCaches = true
	}
	var err error
	if c.secrets, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("secrets"), watchcache.Handlers[*corev1.Secret]{}); err != nil {
		return nil, err
	}
	if c.accounts, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("serviceaccounts"), watchcache.Handlers[*corev1.ServiceAccount]{}); err != nil {
		return nil, err
	}
	if c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"), watchcache.Handlers[*corev1.Pod]{}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run passes over the tokens once the caches have synced, then every
// sync interval after the end of the last pass, until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx)
	}
	for _, synced := range []<-chan struct{}{c.secrets.Synced(), c.accounts.Synced(), c.pods.Synced()} {
		select {
		case <-ctx.Done():
			return
		case <-synced:
		}
	}
	for {
		c.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(c.interval):
		}
	}
}

// pass labels or deletes every legacy token that is due, if the server
// has tracked the tokens' use for a whole period.
func (c *Controller) pass(ctx context.Context) {
	now := c.now().UTC()
	tracked, err := c.trackedSince(ctx)
	if err != nil {
		c.log.Warn("reading since when legacy token use is tracked failed", "err", err)
		return
	}
	if now.Before(tracked.Add(c.period)) {
		return // not tracked long enough to know a token unused
	}
	cut := cutoff{createdBefore: now.Add(-c.period), usedBefore: now.Add(-c.period).Format(dateLayout), today: now.Format(dateLayout)}
	mounted := map[string]map[string]bool{} // namespace → secrets its pods reference
	for _, secret := range c.secrets.ListAll(func(s *corev1.Secret) bool { return s.Type == corev1.SecretTypeServiceAccountToken }) {
		if !c.unused(secret, cut) {
			continue
		}
		if _, ok := mounted[secret.Namespace]; !ok {
			mounted[secret.Namespace] = c.podSecrets(secret.Namespace)
		}
		if mounted[secret.Namespace][secret.Name] {
			continue
		}
		c.expire(ctx, secret, cut)
	}
}

// cutoff is what a pass compares tokens with: the period before now, as
// a time and as a date, and today's date.
type cutoff struct {
	createdBefore     time.Time
	usedBefore, today string
}

// unused reports whether the Secret is an auto-generated legacy token,
// not being deleted, neither created nor last used within the period.
func (c *Controller) unused(secret *corev1.Secret, cut cutoff) bool {
	if !secret.CreationTimestamp.Time.Before(cut.createdBefore) || secret.DeletionTimestamp != nil {
		return false
	}
	if lastUsed, ok := secret.Labels[LastUsedLabel]; ok {
		if _, err := time.Parse(dateLayout, lastUsed); err != nil {
			c.log.Warn("a legacy token's last-used label is not a date", "secret", secret.Namespace+"/"+secret.Name, "err", err)
			return false
		}
		if lastUsed >= cut.usedBefore {
			return false
		}
	}
	return c.autoGenerated(secret)
}

// autoGenerated reports whether the ServiceAccount the Secret is
// annotated with exists (with the annotated uid, if any) and lists it:
// only then is it known to be a token the old token controller made.
func (c *Controller) autoGenerated(secret *corev1.Secret) bool {
	name := secret.Annotations[corev1.ServiceAccountNameKey]
	if name == "" {
		return false
	}
	sa, ok := c.accounts.Get(secret.Namespace, name)
	if !ok {
		return false
	}
	if uid := types.UID(secret.Annotations[corev1.ServiceAccountUIDKey]); uid != "" && uid != sa.UID {
		return false
	}
	for _, ref := range sa.Secrets {
		if ref.Name == secret.Name {
			return true
		}
	}
	return false
}

// expire labels an unused token invalid since today, or deletes it when
// it has been invalid since before the period.
func (c *Controller) expire(ctx context.Context, secret *corev1.Secret, cut cutoff) {
	key := secret.Namespace + "/" + secret.Name
	invalidSince := secret.Labels[InvalidSinceLabel]
	if _, err := time.Parse(dateLayout, invalidSince); err != nil {
		c.log.Info("marking an unused legacy service account token invalid", "secret", key, "invalidSince", cut.today)
		if err := c.markInvalid(ctx, secret, cut.today); err != nil {
			c.log.Warn("labelling a legacy service account token invalid failed", "secret", key, "err", err)
		}
		return
	}
	if invalidSince >= cut.usedBefore {
		return
	}
	c.log.Info("deleting an unused legacy service account token", "secret", key, "lastUsed", secret.Labels[LastUsedLabel], "invalidSince", invalidSince)
	err := c.client.CoreV1().Secrets(secret.Namespace).Delete(ctx, secret.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &secret.ResourceVersion}})
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		c.log.Warn("deleting a legacy service account token failed", "secret", key, "err", err)
	}
}

// markInvalid sets the invalid-since label by a merge patch that also
// carries the Secret's uid, so that it applies to this Secret only.
func (c *Controller) markInvalid(ctx context.Context, secret *corev1.Secret, day string) error {
	patch, err := json.Marshal(applycorev1.Secret(secret.Name, secret.Namespace).WithUID(secret.UID).
		WithLabels(map[string]string{InvalidSinceLabel: day}))
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Secrets(secret.Namespace).Patch(ctx, secret.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// trackedSince is the first moment from which every use of a legacy
// token is known: midnight (UTC) after the date of the tracking
// ConfigMap, read from the server.
func (c *Controller) trackedSince(ctx context.Context) (time.Time, error) {
	cm, err := c.client.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, trackingConfigMap, metav1.GetOptions{})
	if err != nil {
		return time.Time{}, err
	}
	since, ok := cm.Data[trackingSinceKey]
	if !ok {
		return time.Time{}, errors.New("the tracking ConfigMap has no " + trackingSinceKey)
	}
	day, err := time.Parse(dateLayout, since)
	if err != nil {
		return time.Time{}, fmt.Errorf("the tracking ConfigMap's %s: %w", trackingSinceKey, err)
	}
	return day.AddDate(0, 0, 1), nil
}
