package controllers

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
)

// IdentityLeaseGC is kube-apiserver's identity lease garbage collector:
// at start and every IdentityLeaseGCPeriod it deletes the kube-apiserver
// identity leases in kube-system that expired (renewed more than their
// duration ago, or missing either), each read again first, as another
// server may have renewed or deleted it since.
type IdentityLeaseGC struct {
	client dynamic.ResourceInterface
	now    func() time.Time
	log    *slog.Logger
}

// NewIdentityLeaseGC returns the collector, writing through rt (the
// loopback transport of the API server's user).
func NewIdentityLeaseGC(rt http.RoundTripper, log *slog.Logger) (*IdentityLeaseGC, error) {
	client, err := newAPIServerClient(rt)
	if err != nil {
		return nil, err
	}
	return &IdentityLeaseGC{client: client.Resource(leasesGVR).Namespace(metav1.NamespaceSystem), now: time.Now, log: log}, nil
}

// Run collects now and every IdentityLeaseGCPeriod until ctx ends.
func (c *IdentityLeaseGC) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := c.Collect(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("listing the identity leases", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(IdentityLeaseGCPeriod):
		}
	}
}

// Collect deletes the expired identity leases once.
func (c *IdentityLeaseGC) Collect(ctx context.Context) error {
	list, err := c.client.List(ctx, metav1.ListOptions{LabelSelector: IdentityLeaseLabel + "=" + IdentityLeaseComponent})
	if err != nil {
		return err
	}
	for _, item := range list.Items {
		if lease, ok := asLease(item.Object); !ok || !c.expired(lease) {
			continue
		}
		u, err := c.client.Get(ctx, item.GetName(), metav1.GetOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) {
				c.log.Warn("reading an identity lease", "lease", item.GetName(), "err", err)
			}
			continue
		}
		if lease, ok := asLease(u.Object); !ok || !c.expired(lease) {
			continue
		}
		if err := c.client.Delete(ctx, item.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			c.log.Warn("deleting an expired identity lease", "lease", item.GetName(), "err", err)
		}
	}
	return nil
}

func asLease(content map[string]any) (*coordinationv1.Lease, bool) {
	lease := &coordinationv1.Lease{}
	return lease, runtime.DefaultUnstructuredConverter.FromUnstructured(content, lease) == nil
}

// expired: without a renew time or a duration, or renewed longer ago
// than its duration.
func (c *IdentityLeaseGC) expired(lease *coordinationv1.Lease) bool {
	s := lease.Spec
	return s.RenewTime == nil || s.LeaseDurationSeconds == nil ||
		s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds)*time.Second).Before(c.now())
}
