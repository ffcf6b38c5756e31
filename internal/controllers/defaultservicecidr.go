package controllers

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// DefaultServiceCIDR keeps the ServiceCIDR "kubernetes" of the server's
// --service-cluster-ip-range, as kube-apiserver's default ServiceCIDR
// controller does on every server: created when missing, turned dual-stack
// when the flag gained a second family, and its Ready condition set True
// (server-side apply of the status as kubernetes-service-cidr-controller)
// when it is unset or Unknown and the ServiceCIDR matches the flag. A
// ServiceCIDR that does not match, or is being deleted, is left alone
// (upstream also records events then; this logs).
type DefaultServiceCIDR struct {
	client dynamic.Interface
	cidrs  []string
	now    func() time.Time
	log    *slog.Logger
	// synced is closed by the first sync that succeeds.
	synced chan struct{}
	// warned is set once a mismatch has been logged.
	warned bool
}

// DefaultServiceCIDRName is the default ServiceCIDR's name.
const DefaultServiceCIDRName = "kubernetes"

// DefaultServiceCIDRManager is the field manager of its status.
const DefaultServiceCIDRManager = "kubernetes-service-cidr-controller"

// DefaultServiceCIDRInterval is how often it is checked again, upstream's.
const DefaultServiceCIDRInterval = 10 * time.Second

var serviceCIDRsGVR = networkingv1.SchemeGroupVersion.WithResource("servicecidrs")

// NewAPIServerClient is NewClient for the API server's own writes, which
// managedFields record as kube-apiserver's, as upstream's loopback client
// (its user agent starts with kube-apiserver).
func NewAPIServerClient(rt http.RoundTripper) (dynamic.Interface, error) {
	const userAgent = "kube-apiserver/admitd"
	cfg := &rest.Config{Host: "http://loopback", QPS: -1, UserAgent: userAgent}
	return dynamic.NewForConfigAndClient(cfg, &http.Client{Transport: transport.NewUserAgentRoundTripper(userAgent, rt)})
}

// NewDefaultServiceCIDR returns the controller of cidrs (the primary range
// first) writing through client.
func NewDefaultServiceCIDR(client dynamic.Interface, cidrs []string, log *slog.Logger) *DefaultServiceCIDR {
	return &DefaultServiceCIDR{client: client, cidrs: cidrs, now: time.Now, log: log, synced: make(chan struct{})}
}

// Synced is closed once a sync has succeeded.
func (c *DefaultServiceCIDR) Synced() <-chan struct{} { return c.synced }

// Run syncs every 100 ms until a sync succeeds (kube-apiserver's post-start
// hook waits for that), then every DefaultServiceCIDRInterval, until ctx
// ends.
func (c *DefaultServiceCIDR) Run(ctx context.Context) {
	for ctx.Err() == nil {
		wait := DefaultServiceCIDRInterval
		if err := c.Sync(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("syncing the default ServiceCIDR", "err", err)
		}
		select {
		case <-c.synced:
		default:
			wait = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// Sync creates the default ServiceCIDR, or brings an existing one up to
// date.
func (c *DefaultServiceCIDR) Sync(ctx context.Context) error {
	client := c.client.Resource(serviceCIDRsGVR)
	u, err := client.Get(ctx, DefaultServiceCIDRName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		u, err = c.create(ctx, client)
	}
	if err != nil {
		return err
	}
	sc := &networkingv1.ServiceCIDR{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, sc); err != nil {
		return err
	}
	if len(c.cidrs) == 2 && len(sc.Spec.CIDRs) == 1 && sc.Spec.CIDRs[0] == c.cidrs[0] {
		sc.Spec.CIDRs = c.cidrs
		if err := updateRead(ctx, client, sc); err != nil {
			c.log.Error("the default ServiceCIDR can not be updated to dual stack", "from", sc.Spec.CIDRs[:1], "to", c.cidrs, "err", err)
		}
	} else if err := c.syncStatus(ctx, client, sc); err != nil {
		return err
	}
	select {
	case <-c.synced:
	default:
		close(c.synced)
	}
	return nil
}

func (c *DefaultServiceCIDR) create(ctx context.Context, client dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
	c.log.Info("creating the default ServiceCIDR", "cidrs", c.cidrs)
	sc := &networkingv1.ServiceCIDR{TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "ServiceCIDR"},
		ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceCIDRName}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: c.cidrs}}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sc)
	if err != nil {
		return nil, err
	}
	u, err := client.Create(ctx, &unstructured.Unstructured{Object: content}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return client.Get(ctx, DefaultServiceCIDRName, metav1.GetOptions{})
	}
	return u, err
}

// syncStatus sets the Ready condition True when it is unset or Unknown
// and sc matches the flag.
func (c *DefaultServiceCIDR) syncStatus(ctx context.Context, client dynamic.ResourceInterface, sc *networkingv1.ServiceCIDR) error {
	if sc.DeletionTimestamp != nil {
		return nil
	}
	if !slices.Equal(sc.Spec.CIDRs, c.cidrs) {
		if !c.warned {
			c.log.Warn("the default ServiceCIDR does not match the --service-cluster-ip-range configuration", "serviceCIDRs", sc.Spec.CIDRs, "flag", c.cidrs)
			c.warned = true
		}
		return nil
	}
	ready := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	if ready != nil && ready.Status != metav1.ConditionUnknown {
		return nil
	}
	apply := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
		"metadata": map[string]any{"name": DefaultServiceCIDRName},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": networkingv1.ServiceCIDRConditionReady, "status": string(metav1.ConditionTrue),
			"message": "Kubernetes default Service CIDR is ready", "lastTransitionTime": c.now().UTC().Format(time.RFC3339),
		}}},
	}}
	_, err := client.ApplyStatus(ctx, DefaultServiceCIDRName, apply, metav1.ApplyOptions{FieldManager: DefaultServiceCIDRManager, Force: true})
	return err
}
