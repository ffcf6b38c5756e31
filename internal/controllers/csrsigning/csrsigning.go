// Package csrsigning is kube-controller-manager's CSR signing controller
// (certificatesigningrequest-signing-controller), as upstream's
// pkg/controller/certificates/signer: a CertificateSigningRequest that is
// approved (and neither denied nor failed) for one of the kubernetes.io
// signers it has a CA for gets its certificate in status.certificate,
// written through the status subresource; a request the signer refuses
// (kubelet certificates with another subject, names or usages; client
// certificates without client auth) gets the Failed condition with reason
// SignerValidationFailure instead. Certificates last the request's
// spec.expirationSeconds, at least 10 minutes and at most the signer's
// duration (--cluster-signing-duration).
//
// It reads CSRs from storage through a watch and writes only as a client
// of the server, as kube-controller-manager's certificate-controller
// service account, through admission (CertificateSigning checks its
// "sign" permission). It records no events, as upstream.
package csrsigning

import (
	"context"
	"encoding/pem"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/time/rate"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "certificatesigningrequest-signing-controller"

// User is kube-controller-manager's certificate-controller service
// account, which its CSR controllers share.
var User = controllers.ControllerUser("certificate-controller")

// ReasonSignerValidationFailure is the reason of the Failed condition of a
// request the signer refuses.
const ReasonSignerValidationFailure = "SignerValidationFailure"

// workers is kube-controller-manager's for each signer.
const workers = 5

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // writes status as User
	Log       *slog.Logger
	// CAs are the signers' CAs by signer name (KubeletServing, ...); a
	// signer without one signs nothing.
	CAs map[string]CA
	// Duration is the longest certificate issued (DefaultDuration).
	Duration time.Duration
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
}

// Controller signs approved CSRs.
type Controller struct {
	caches    *controllers.Caches
	ownCaches bool // caches are the controller's own, started by Run
	client    kubernetes.Interface
	log       *slog.Logger
	cas       map[string]CA
	duration  time.Duration
	csrs      *watchcache.Cache[*certificatesv1.CertificateSigningRequest]
	queue     workqueue.TypedRateLimitingInterface[string]
	now       func() time.Time
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, log: cfg.Log, cas: cfg.CAs, duration: cfg.Duration,
		now: time.Now, queue: newQueue()}
	if c.duration <= 0 {
		c.duration = DefaultDuration
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	enqueue := func(csr *certificatesv1.CertificateSigningRequest) { c.queue.Add(csr.Name) }
	if c.caches = cfg.Caches; c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, c.log)
		c.ownCaches = true
	}
	var err error
	if c.csrs, err = controllers.Shared(c.caches, certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"),
		watchcache.Handlers[*certificatesv1.CertificateSigningRequest]{Add: enqueue,
			Update: func(_, cur *certificatesv1.CertificateSigningRequest) { enqueue(cur) }, Remove: enqueue}); err != nil {
		return nil, err
	}
	return c, nil
}

// newQueue is upstream's certificate queue: per-item backoff from 200ms
// to 1000s, and 10 retries a second overall (bursts of 100).
func newQueue() workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedMaxOfRateLimiter[string](
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 1000*time.Second),
			&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)}),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "certificate"})
}

// Run follows storage and signs until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	controllers.RunWorkers(ctx, c.queue, []<-chan struct{}{c.csrs.Synced()}, workers, c.processNext)
}

func (c *Controller) processNext(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	if err := c.sync(ctx, name); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("signing a certificate signing request failed, will retry", "csr", name, "err", err)
			c.queue.AddRateLimited(name)
		}
		return true
	}
	c.queue.Forget(name)
	return true
}

// sync signs the CSR name as handle does.
func (c *Controller) sync(ctx context.Context, name string) error {
	cached, ok := c.csrs.Get("", name)
	if !ok {
		return nil
	}
	return c.handle(ctx, cached)
}

// handle signs the CSR (shared, not changed) if it is approved, not
// failed, without a certificate, and for a signer the controller has a CA
// for; it fails it if that signer refuses it.
func (c *Controller) handle(ctx context.Context, cached *certificatesv1.CertificateSigningRequest) error {
	if len(cached.Status.Certificate) > 0 || !approved(cached) || hasTrueCondition(cached, certificatesv1.CertificateFailed) {
		return nil
	}
	currentCA := c.cas[cached.Spec.SignerName]
	if currentCA == nil {
		return nil
	}
	csr := cached.DeepCopy()
	req, err := parseRequest(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %v", csr.Name, err)
	}
	if err := Validate(csr.Spec.SignerName, req, csr.Spec.Usages); err != nil {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: ReasonSignerValidationFailure,
			Message: err.Error(), LastUpdateTime: metav1.Now()})
		if _, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("error adding failure condition for csr: %v", err)
		}
		return nil
	}
	ca, err := currentCA()
	if err != nil {
		return fmt.Errorf("error auto signing csr: %v", err)
	}
	der, err := Certificate(ca, req, csr.Spec.Usages, Duration(c.duration, csr.Spec.ExpirationSeconds), c.now())
	if err != nil {
		return fmt.Errorf("error auto signing csr: %v", err)
	}
	csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if _, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("error updating signature for csr: %v", err)
	}
	c.log.Info("signed certificate signing request", "csr", csr.Name, "signer", csr.Spec.SignerName)
	return nil
}

// approved: an Approved condition and no Denied one (whatever their
// status, as upstream).
func approved(csr *certificatesv1.CertificateSigningRequest) bool {
	var ok, denied bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			ok = true
		case certificatesv1.CertificateDenied:
			denied = true
		}
	}
	return ok && !denied
}

// hasTrueCondition: a condition of type t with status True or none.
func hasTrueCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && (c.Status == "" || c.Status == corev1.ConditionTrue) {
			return true
		}
	}
	return false
}
