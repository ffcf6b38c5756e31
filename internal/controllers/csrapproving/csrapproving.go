// Package csrapproving is kube-controller-manager's CSR approver
// (certificatesigningrequest-approving-controller), as upstream's
// pkg/controller/certificates/approver: a pending request for a kubelet
// client certificate (signer kubernetes.io/kube-apiserver-client-kubelet,
// subject system:node:<name> in system:nodes, no alternative names,
// kubelet client usages) is approved, reason AutoApproved, when a
// SubjectAccessReview says its requestor may create
// certificatesigningrequests/selfnodeclient (a node renewing its own
// certificate) or certificatesigningrequests/nodeclient; a recognized
// request the reviews do not allow is tried again with backoff.
//
// It reads CSRs from storage through a watch and writes (reviews and the
// approval subresource) only as a client of the server, as
// kube-controller-manager's certificate-controller service account,
// through admission. It records no events, as upstream.
package csrapproving

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/time/rate"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/csrsigning"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "certificatesigningrequest-approving-controller"

// User is kube-controller-manager's certificate-controller service
// account, which its CSR controllers share.
var User = controllers.ControllerUser("certificate-controller")

// ReasonAutoApproved is the reason of the Approved condition it adds.
const ReasonAutoApproved = "AutoApproved"

const workers = 5

// recognizer is a kind of request the approver approves when the
// requestor may create the subresource of certificatesigningrequests.
type recognizer struct {
	recognize   func(*certificatesv1.CertificateSigningRequest, *x509.CertificateRequest) bool
	subresource string
	message     string
}

var recognizers = []recognizer{
	{isSelfNodeClient, "selfnodeclient", "Auto approving self kubelet client certificate after SubjectAccessReview."},
	{isNodeClient, "nodeclient", "Auto approving kubelet client certificate after SubjectAccessReview."},
}

// isNodeClient: a kubelet client certificate its signer would sign.
func isNodeClient(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.SignerName == csrsigning.KubeAPIServerClientKubelet &&
		csrsigning.Validate(csrsigning.KubeAPIServerClientKubelet, req, csr.Spec.Usages) == nil
}

// isSelfNodeClient: a node client certificate for the requestor itself.
func isSelfNodeClient(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.Username == req.Subject.CommonName && isNodeClient(csr, req)
}

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // reviews and approves as User
	Log       *slog.Logger
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
}

// Controller approves kubelet client CSRs.
type Controller struct {
	caches    *controllers.Caches
	ownCaches bool // caches are the controller's own, started by Run
	client    kubernetes.Interface
	log       *slog.Logger
	csrs      *watchcache.Cache[*certificatesv1.CertificateSigningRequest]
	queue     workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, log: cfg.Log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedMaxOfRateLimiter[string](
				workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 1000*time.Second),
				&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)}),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "certificate"})}
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

// Run follows storage and approves until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	controllers.RunWorkers(ctx, c.queue, []<-chan struct{}{c.csrs.Synced()}, workers, c.processNext)
}

// errNotAllowed: a recognized request whose reviews did not allow it,
// tried again with backoff and logged quietly.
var errNotAllowed = errors.New("subject access review was not approved")

func (c *Controller) processNext(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	csr, ok := c.csrs.Get("", name)
	if !ok {
		c.queue.Forget(name)
		return true
	}
	if err := c.handle(ctx, csr); err != nil {
		if ctx.Err() == nil {
			level := slog.LevelWarn
			if errors.Is(err, errNotAllowed) {
				level = slog.LevelDebug
			}
			c.log.Log(ctx, level, "approving a certificate signing request failed, will retry", "csr", name, "err", err)
			c.queue.AddRateLimited(name)
		}
		return true
	}
	c.queue.Forget(name)
	return true
}

// handle approves the CSR (shared, not changed) if it is pending, of a
// recognized kind, and a review allows its requestor.
func (c *Controller) handle(ctx context.Context, cached *certificatesv1.CertificateSigningRequest) error {
	if len(cached.Status.Certificate) > 0 || decided(cached) {
		return nil
	}
	block, _ := pem.Decode(cached.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return fmt.Errorf("unable to parse csr %q: PEM block type must be CERTIFICATE REQUEST", cached.Name)
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %v", cached.Name, err)
	}
	var tried []string
	for _, r := range recognizers {
		if !r.recognize(cached, req) {
			continue
		}
		tried = append(tried, r.subresource)
		allowed, err := c.allowed(ctx, cached, r.subresource)
		if err != nil {
			return err
		}
		if allowed {
			csr := cached.DeepCopy()
			csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
				Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: ReasonAutoApproved, Message: r.message})
			if _, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("error updating approval for csr: %v", err)
			}
			return nil
		}
	}
	if len(tried) > 0 {
		return fmt.Errorf("recognized csr %q as %v but %w", cached.Name, tried, errNotAllowed)
	}
	return nil
}

// decided: approved or denied already.
func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
			return true
		}
	}
	return false
}

// allowed asks the server whether the requestor may create the
// subresource of certificatesigningrequests.
func (c *Controller) allowed(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, subresource string) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests",
			Verb: "create", Subresource: subresource, Version: "*"}}}
	sar, err := c.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}
