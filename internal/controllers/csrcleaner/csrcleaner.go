// Package csrcleaner is kube-controller-manager's CSR cleaner
// (certificatesigningrequest-cleaner-controller), as upstream's
// pkg/controller/certificates/cleaner: every hour it deletes the
// CertificateSigningRequests that are done with — issued and approved
// more than an hour ago, denied or failed more than an hour ago, pending
// (no condition) for more than a day, approved but not issued for more
// than a day, or whose certificate has expired.
//
// It reads CSRs from storage through a watch and deletes only as a client
// of the server, as kube-controller-manager's certificate-controller
// service account, through admission. It records no events, as upstream.
package csrcleaner

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "certificatesigningrequest-cleaner-controller"

// User is kube-controller-manager's certificate-controller service
// account, which its CSR controllers share.
var User = controllers.ControllerUser("certificate-controller")

// Upstream's periods.
const (
	pollingInterval    = time.Hour
	approvedExpiration = time.Hour
	deniedExpiration   = time.Hour
	pendingExpiration  = 24 * time.Hour
)

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // deletes as User
	Log       *slog.Logger
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
}

// Controller deletes CSRs that are done with.
type Controller struct {
	caches    *controllers.Caches
	ownCaches bool // caches are the controller's own, started by Run
	client    kubernetes.Interface
	log       *slog.Logger
	csrs      *watchcache.Cache[*certificatesv1.CertificateSigningRequest]
	now       func() time.Time
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, log: cfg.Log, now: time.Now}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.caches = cfg.Caches; c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, c.log)
		c.ownCaches = true
	}
	var err error
	if c.csrs, err = controllers.Shared(c.caches, certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"),
		watchcache.Handlers[*certificatesv1.CertificateSigningRequest]{}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run follows storage and cleans every hour until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	select {
	case <-ctx.Done():
		return
	case <-c.csrs.Synced():
	}
	for {
		c.clean(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollingInterval):
		}
	}
}

// clean deletes every CSR that is done with.
func (c *Controller) clean(ctx context.Context) {
	for _, csr := range c.csrs.ListAll(func(*certificatesv1.CertificateSigningRequest) bool { return true }) {
		why := DoneWith(csr, c.now())
		if why == "" {
			continue
		}
		if err := c.client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{}); err != nil {
			c.log.Warn("deleting a certificate signing request failed", "csr", csr.Name, "err", err)
			continue
		}
		c.log.Info("deleted certificate signing request", "csr", csr.Name, "reason", why)
	}
}

// DoneWith says why the CSR is to be deleted at now, in upstream's order
// of checks; "" when it is not.
func DoneWith(csr *certificatesv1.CertificateSigningRequest, now time.Time) string {
	issued := len(csr.Status.Certificate) > 0
	olderThan := func(t metav1.Time, d time.Duration) bool { return !t.IsZero() && now.Sub(t.Time) > d }
	conditionOlderThan := func(t certificatesv1.RequestConditionType, d time.Duration) bool {
		for _, c := range csr.Status.Conditions {
			if c.Type == t && olderThan(c.LastUpdateTime, d) {
				return true
			}
		}
		return false
	}
	switch {
	case issued && conditionOlderThan(certificatesv1.CertificateApproved, approvedExpiration):
		return "issued and approved more than an hour ago"
	case conditionOlderThan(certificatesv1.CertificateDenied, deniedExpiration):
		return "denied more than an hour ago"
	case conditionOlderThan(certificatesv1.CertificateFailed, deniedExpiration):
		return "failed more than an hour ago"
	case len(csr.Status.Conditions) == 0 && olderThan(csr.CreationTimestamp, pendingExpiration):
		return "pending for more than a day"
	case hasCondition(csr, certificatesv1.CertificateApproved) && issued && expired(csr.Status.Certificate, now):
		return "its certificate has expired"
	case !issued && conditionOlderThan(certificatesv1.CertificateApproved, pendingExpiration):
		return "approved but not issued for more than a day"
	}
	return ""
}

func hasCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}

// expired: the first certificate of the first PEM block has ended.
func expired(certPEM []byte, now time.Time) bool {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return false
	}
	certs, err := x509.ParseCertificates(block.Bytes)
	if err != nil || len(certs) == 0 {
		return false
	}
	return now.After(certs[0].NotAfter)
}
