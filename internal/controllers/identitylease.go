package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

// The identity lease of kube-apiserver 1.37.2 (APIServerIdentity): every
// server holds a Lease in kube-system named after its host, renewed every
// IdentityLeaseRenewInterval, and deletes the expired ones of others.
const (
	// IdentityLeaseLabel marks an identity lease with the component whose
	// it is.
	IdentityLeaseLabel = "apiserver.kubernetes.io/identity"
	// IdentityLeaseComponent is kube-apiserver's value of the label.
	IdentityLeaseComponent = "kube-apiserver"
	// IdentityLeaseDurationSeconds is how long a lease lasts unrenewed.
	IdentityLeaseDurationSeconds = 3600
	// PeerAdvertiseAddressAnnotation is where a server says at which
	// address its peers reach it (UnknownVersionInteroperabilityProxy).
	PeerAdvertiseAddressAnnotation = "kubernetes.io/peer-advertise-address"
)

// IdentityLeaseRenewInterval and IdentityLeaseGCPeriod are upstream's
// periods; variables so that tests can shorten them.
var (
	IdentityLeaseRenewInterval = 10 * time.Second
	IdentityLeaseGCPeriod      = 3600 * time.Second
)

var leasesGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// APIServerID is the identity of kube-apiserver on hostname, upstream's:
// "apiserver-" and the first 16 bytes of the SHA-256 of the host name and
// the component, each prefixed with its length (2 bytes, big-endian),
// in lower-case unpadded base32.
func APIServerID(hostname string) string {
	var data []byte
	for _, s := range []string{hostname, IdentityLeaseComponent} {
		data = binary.BigEndian.AppendUint16(data, uint16(len(s)))
		data = append(data, s...)
	}
	sum := sha256.Sum256(data)
	return "apiserver-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

// IdentityLease keeps this server's identity lease, as upstream's lease
// controller does: Start deletes the lease a previous run left, then Run
// creates it and renews it; Stop deletes it on a graceful shutdown.
type IdentityLease struct {
	client      dynamic.ResourceInterface
	name        string
	holder      string
	hostname    string
	peerAddress string // "" leaves the annotation off
	now         func() time.Time
	log         *slog.Logger
	latest      *coordinationv1.Lease

	// stop is closed by Stop: no sync starts after it, a backoff ends;
	// mu is held by a sync, so that Stop deletes after the sync in
	// progress has written.
	stop     chan struct{}
	stopOnce sync.Once
	mu       sync.Mutex
}

// NewIdentityLease returns the controller of the lease of id on hostname,
// writing through rt (the loopback transport of the API server's user);
// peerAddress (host:port) is announced in the lease's annotation unless
// empty.
func NewIdentityLease(rt http.RoundTripper, id, hostname, peerAddress string, log *slog.Logger) (*IdentityLease, error) {
	client, err := newAPIServerClient(rt)
	if err != nil {
		return nil, err
	}
	return &IdentityLease{client: client.Resource(leasesGVR).Namespace(metav1.NamespaceSystem), name: id,
		holder: id + "_" + string(uuid.NewUUID()), hostname: hostname, peerAddress: peerAddress, now: time.Now, log: log,
		stop: make(chan struct{})}, nil
}

// leaseDeleteTimeout bounds the deletion of the lease at start and stop,
// as upstream's.
const leaseDeleteTimeout = 10 * time.Second

// Start deletes the lease an earlier run of this server left behind.
func (c *IdentityLease) Start(ctx context.Context) {
	c.deleteLease(ctx)
}

// Stop ends the renewals (Run returns) and deletes the lease, as a server
// shutting down gracefully does; a renewal in progress finishes first, and
// none follows.
func (c *IdentityLease) Stop(ctx context.Context) {
	c.stopOnce.Do(func() { close(c.stop) })
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deleteLease(ctx)
}

func (c *IdentityLease) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

func (c *IdentityLease) deleteLease(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, leaseDeleteTimeout)
	defer cancel()
	if err := c.client.Delete(ctx, c.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		c.log.Warn("deleting the identity lease", "lease", c.name, "err", err)
	}
}

// Run creates and renews the lease until ctx ends or Stop is called,
// every renew interval (with upstream's 4% jitter) after the last sync
// ended.
func (c *IdentityLease) Run(ctx context.Context) {
	for ctx.Err() == nil && !c.stopped() {
		c.sync(ctx)
		jitter := time.Duration(rand.Float64() * 0.04 * float64(IdentityLeaseRenewInterval))
		select {
		case <-ctx.Done():
		case <-c.stop:
		case <-time.After(IdentityLeaseRenewInterval + jitter):
		}
	}
}

// sync renews from the lease last written; failing that (or at first),
// it reads the lease or creates it, and renews what it read. Nothing once
// stopped.
func (c *IdentityLease) sync(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped() {
		return
	}
	if c.latest != nil && c.renew(ctx, c.latest) == nil {
		return
	}
	lease, created := c.ensure(ctx)
	c.latest = lease
	if lease != nil && !created {
		if err := c.renew(ctx, lease); err != nil && ctx.Err() == nil {
			c.log.Warn("renewing the identity lease, will retry", "lease", c.name, "err", err)
		}
	}
}

// maxLeaseUpdates bounds the updates of one renewal.
const maxLeaseUpdates = 5

// renew writes base with the lease's duration, renew time and marks; a
// conflict reads the lease again.
func (c *IdentityLease) renew(ctx context.Context, base *coordinationv1.Lease) error {
	var err error
	for range maxLeaseUpdates {
		var written *coordinationv1.Lease
		if written, err = c.write(ctx, c.marked(base), false); err == nil {
			c.latest = written
			return nil
		}
		if !apierrors.IsConflict(err) {
			continue
		}
		if base, _ = c.ensure(ctx); base == nil {
			return err
		}
	}
	return err
}

// ensure reads the lease, creating it when there is none, retrying with a
// backoff (100 ms doubling up to 7 s) until it succeeds or ctx ends.
func (c *IdentityLease) ensure(ctx context.Context) (lease *coordinationv1.Lease, created bool) {
	wait := 100 * time.Millisecond
	for {
		u, err := c.client.Get(ctx, c.name, metav1.GetOptions{})
		if err == nil {
			if lease, ok := asLease(u.Object); ok {
				return lease, false
			}
			err = fmt.Errorf("undecodable lease %s", c.name)
		} else if apierrors.IsNotFound(err) {
			fresh := &coordinationv1.Lease{TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
				ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: metav1.NamespaceSystem},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(c.holder)}}
			if lease, err = c.write(ctx, c.marked(fresh), true); err == nil {
				return lease, true
			}
		}
		wait = min(2*wait, 7*time.Second)
		c.log.Warn("ensuring the identity lease exists, will retry", "lease", c.name, "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return nil, false
		case <-c.stop:
			return nil, false
		case <-time.After(wait):
		}
	}
}

// marked is a copy of base renewed now, with its labels and annotation.
func (c *IdentityLease) marked(base *coordinationv1.Lease) *coordinationv1.Lease {
	lease := base.DeepCopy()
	lease.TypeMeta = metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](IdentityLeaseDurationSeconds)
	lease.Spec.RenewTime = &metav1.MicroTime{Time: c.now()}
	if lease.Labels == nil {
		lease.Labels = map[string]string{}
	}
	lease.Labels[IdentityLeaseLabel] = IdentityLeaseComponent
	lease.Labels[corev1.LabelHostname] = c.hostname
	if c.peerAddress != "" {
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		lease.Annotations[PeerAdvertiseAddressAnnotation] = c.peerAddress
	}
	return lease
}

// write creates or updates lease and returns what was stored.
func (c *IdentityLease) write(ctx context.Context, lease *coordinationv1.Lease, create bool) (*coordinationv1.Lease, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(lease)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	if create {
		u, err = c.client.Create(ctx, u, metav1.CreateOptions{})
	} else {
		u, err = c.client.Update(ctx, u, metav1.UpdateOptions{})
	}
	if err != nil {
		return nil, err
	}
	stored := &coordinationv1.Lease{}
	return stored, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, stored)
}
