package servicecidrs

import (
	"context"
	"encoding/json"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1apply "k8s.io/client-go/applyconfigurations/networking/v1"
)

// The Ready conditions the controller writes, worded as upstream's (the
// ready one has no reason).
const (
	readyMessage       = "Kubernetes Service CIDR is ready"
	terminatingMessage = "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
)

// sync brings the ServiceCIDR named key to what it should be.
func (c *Controller) sync(ctx context.Context, key string) error {
	sc, ok := c.cidrs.Get("", key)
	if !ok {
		return nil
	}
	if sc.DeletionTimestamp != nil {
		return c.syncDeleting(ctx, sc)
	}
	if err := c.addFinalizer(ctx, sc); err != nil {
		return err
	}
	ready := metav1.Condition{Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue, Message: readyMessage}
	if err := c.setReady(ctx, sc, ready); err != nil {
		c.recorder.Event(sc, corev1.EventTypeWarning, "KubernetesServiceCIDRError", "The ServiceCIDR Status can not be set to Ready=True")
		return err
	}
	return nil
}

// syncDeleting removes the finalizer of sc, being deleted, once no
// IPAddress would be left outside every ServiceCIDR and the deletion is
// old enough; until then a blocked deletion says why in Ready.
func (c *Controller) syncDeleting(ctx context.Context, sc *networkingv1.ServiceCIDR) error {
	if c.strands(sc) {
		c.log.Info("the deletion of a ServiceCIDR waits for the IPAddresses only it holds", "serviceCIDR", sc.Name)
		terminating := metav1.Condition{Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionFalse,
			Reason: networkingv1.ServiceCIDRReasonTerminating, Message: terminatingMessage}
		return c.setReady(ctx, sc, terminating)
	}
	// the API servers' allocators may still take it for ready: a new
	// address from it would be stranded, so the finalizer stays for the
	// grace period
	if wait := c.grace - c.now().Sub(sc.DeletionTimestamp.Time); wait > 0 {
		c.queue.AddAfter(sc.Name, wait)
		return nil
	}
	return c.removeFinalizer(ctx, sc)
}

// strands reports whether deleting sc would leave a Service's IPAddress
// in no ServiceCIDR: sc's ranges are not all contained in another
// ServiceCIDR's, and an allocator's IPAddress of one of sc's families is
// held by sc alone.
func (c *Controller) strands(sc *networkingv1.ServiceCIDR) bool {
	ranges := prefixes(sc)
	if c.coveredByOthers(sc.Name, ranges) {
		return false
	}
	families := map[string]bool{}
	for _, p := range ranges {
		families[familyOf(p.Addr())] = true
	}
	stranded := c.addresses.ListAll(func(ip *networkingv1.IPAddress) bool {
		addr, ok := allocatedAddress(ip)
		if !ok || !families[ip.Labels[networkingv1.LabelIPAddressFamily]] {
			return false
		}
		holders := c.holders(addr)
		return len(holders) == 1 && holders[0].Name == sc.Name
	})
	return len(stranded) > 0
}

// coveredByOthers reports whether each of ranges, the CIDRs of the
// ServiceCIDR name, lies inside a CIDR of another ServiceCIDR.
func (c *Controller) coveredByOthers(name string, ranges []netip.Prefix) bool {
	for _, p := range ranges {
		parents := c.cidrsWith(func(q netip.Prefix) bool { return containsPrefix(q, p) })
		if !slices.ContainsFunc(parents, func(sc *networkingv1.ServiceCIDR) bool { return sc.Name != name }) {
			return false
		}
	}
	return true
}

// familyOf is the networking.k8s.io/ip-family label value of addr's
// family.
func familyOf(addr netip.Addr) string {
	if addr.Is4() {
		return string(corev1.IPv4Protocol)
	}
	return string(corev1.IPv6Protocol)
}

// addFinalizer gives sc the finalizer, unless it has it.
func (c *Controller) addFinalizer(ctx context.Context, sc *networkingv1.ServiceCIDR) error {
	if slices.Contains(sc.Finalizers, Finalizer) {
		return nil
	}
	return c.patchFinalizer(ctx, sc.Name, "finalizers")
}

// removeFinalizer takes the finalizer off sc, if it has it.
func (c *Controller) removeFinalizer(ctx context.Context, sc *networkingv1.ServiceCIDR) error {
	if !slices.Contains(sc.Finalizers, Finalizer) {
		return nil
	}
	c.log.Info("removing the finalizer of a deleted ServiceCIDR", "serviceCIDR", sc.Name)
	return c.patchFinalizer(ctx, sc.Name, "$deleteFromPrimitiveList/finalizers")
}

// patchFinalizer sends the strategic merge patch that puts the finalizer
// in the metadata field ("finalizers" merges it in,
// "$deleteFromPrimitiveList/finalizers" takes it out) of the ServiceCIDR
// name, as upstream's controller does; one gone meanwhile is no error.
func (c *Controller) patchFinalizer(ctx context.Context, name, field string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{field: []string{Finalizer}}})
	if err != nil {
		return err
	}
	_, err = c.client.NetworkingV1().ServiceCIDRs().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// setReady applies cond as sc's Ready condition, now its transition time,
// unless sc's already has its status, reason and message.
func (c *Controller) setReady(ctx context.Context, sc *networkingv1.ServiceCIDR, cond metav1.Condition) error {
	cur := apimeta.FindStatusCondition(sc.Status.Conditions, cond.Type)
	if cur != nil && cur.Status == cond.Status && cur.Reason == cond.Reason && cur.Message == cond.Message {
		return nil
	}
	c.log.Debug("setting a ServiceCIDR's Ready condition", "serviceCIDR", sc.Name, "status", cond.Status, "reason", cond.Reason)
	status := networkingv1apply.ServiceCIDRStatus().WithConditions(metav1apply.Condition().WithType(cond.Type).
		WithStatus(cond.Status).WithReason(cond.Reason).WithMessage(cond.Message).WithLastTransitionTime(metav1.NewTime(c.now())))
	_, err := c.client.NetworkingV1().ServiceCIDRs().ApplyStatus(ctx, networkingv1apply.ServiceCIDR(sc.Name).WithStatus(status),
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return err
}
