package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/internal/ipallocator"
	"github.com/admitd/admitd/internal/registry"
)

// Service cluster IPs: what upstream's Service storage does around the
// generic store (its BeginCreate hook and the release after a delete),
// with the IPAddress allocator of Config.ClusterIPs. An address is taken
// when its IPAddress is stored, so servers sharing a store need nothing
// more to agree.

var serviceKind = corev1.SchemeGroupVersion.WithKind("Service").GroupKind()

func isServices(res *registry.Resource) bool {
	return res.Group == "" && res.Resource == "services"
}

// allocateForCreate gives a Service being created its cluster IP, then its
// node ports; undo gives them back.
func (s *Server) allocateForCreate(ctx context.Context, res *registry.Resource, obj runtime.Object, dryRun bool) (undo func(), err error) {
	undoIPs, err := s.allocateServiceIPs(ctx, res, obj, dryRun)
	if err != nil {
		return nil, err
	}
	svc, ok := obj.(*corev1.Service)
	if !ok || s.cfg.NodePorts == nil || !isServices(res) {
		return undoIPs, nil
	}
	undoPorts, err := s.allocateNodePorts(svc, map[int]bool{})
	if err != nil {
		undoIPs()
		return nil, err
	}
	return func() { undoPorts(); undoIPs() }, nil
}

// allocateServiceIPs gives a Service being created the cluster IP it asks
// for, or a free one; undo gives it back (a failed create). A dry run
// takes nothing: it checks that an address asked for is in the range and
// shows the range's network address for one not asked for, as upstream's.
// A clusterIP that does not parse, or a clusterIPs without clusterIP, is
// left to validation.
func (s *Server) allocateServiceIPs(ctx context.Context, res *registry.Resource, obj runtime.Object, dryRun bool) (undo func(), err error) {
	nothing := func() {}
	svc, ok := obj.(*corev1.Service)
	alloc := s.cfg.ClusterIPs
	if !ok || alloc == nil || !isServices(res) || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nothing, nil
	}
	spec := &svc.Spec
	if spec.ClusterIP != "" && len(spec.ClusterIPs) == 0 {
		spec.ClusterIPs = []string{spec.ClusterIP}
	}
	if errs := checkIPFamilies(svc, alloc.Family()); len(errs) > 0 {
		return nil, apierrors.NewInvalid(serviceKind, svc.Name, errs)
	}
	if spec.ClusterIP == corev1.ClusterIPNone {
		return nothing, nil
	}
	switch ip := spec.ClusterIP; {
	case ip == "" && len(spec.ClusterIPs) == 0:
		return s.allocateNextIP(ctx, svc, dryRun)
	case ip != "" && net.ParseIP(ip) != nil:
		parsed := net.ParseIP(ip)
		if dryRun {
			err = alloc.CheckDryRun(ctx, parsed)
		} else {
			err = alloc.Allocate(ctx, svc, parsed)
		}
		if err != nil {
			el := field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs"), spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %v: %v", ip, err))}
			return nil, apierrors.NewInvalid(serviceKind, svc.Name, el)
		}
		if dryRun {
			return nothing, nil
		}
		return func() { s.releaseIP(ctx, parsed) }, nil
	}
	return nothing, nil
}

// allocateNextIP gives svc a free address, or shows the dry run's.
func (s *Server) allocateNextIP(ctx context.Context, svc *corev1.Service, dryRun bool) (undo func(), err error) {
	alloc := s.cfg.ClusterIPs
	var got net.IP
	if dryRun {
		got, err = alloc.DryRunNext(ctx)
	} else {
		got, err = alloc.AllocateNext(ctx, svc)
	}
	if errors.Is(err, ipallocator.ErrFull) {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP for Service %q: %w", svc.Name, err))
	}
	if err != nil {
		el := field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs"), svc.Spec.ClusterIPs, fmt.Sprintf("failed to allocate IP: %v", err))}
		return nil, apierrors.NewInvalid(serviceKind, svc.Name, el)
	}
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = got.String(), []string{got.String()}
	if dryRun {
		return func() {}, nil
	}
	return func() { s.releaseIP(ctx, got) }, nil
}

// checkIPFamilies refuses, as upstream's, the IP families this server does
// not serve: a cluster IP of another family; unless the Service is
// headless without a selector, dual stack required and an ipFamilies
// entry of another family.
func checkIPFamilies(svc *corev1.Service, served corev1.IPFamily) field.ErrorList {
	var errs field.ErrorList
	spec := &svc.Spec
	for i, ip := range spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		parsed := net.ParseIP(ip)
		if parsed == nil || i < len(spec.IPFamilies) {
			continue
		}
		if family := familyOf(parsed); family != served {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), spec.ClusterIPs, fmt.Sprintf("%s is not configured on this cluster", family)))
		}
	}
	if len(errs) > 0 || (spec.ClusterIP == corev1.ClusterIPNone && len(spec.Selector) == 0) {
		return errs
	}
	if p := spec.IPFamilyPolicy; p != nil && *p == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), p, "this cluster is not configured for dual-stack services"))
	}
	for i, family := range spec.IPFamilies {
		if family != served {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), family, "not configured on this cluster"))
		}
	}
	return errs
}

func familyOf(ip net.IP) corev1.IPFamily {
	if ip.To4() != nil {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// releaseIP gives back an address, logging a failure (the repair loop
// deletes an IPAddress left behind).
func (s *Server) releaseIP(ctx context.Context, ip net.IP) {
	if err := s.cfg.ClusterIPs.Release(context.WithoutCancel(ctx), ip); err != nil {
		s.log.Warn("releasing a cluster IP", "ip", ip.String(), "err", err)
	}
}

// releaseServiceIPs gives back the cluster IPs and node ports of a deleted
// Service.
func (s *Server) releaseServiceIPs(ctx context.Context, ev WriteEvent) {
	svc, ok := ev.Object.(*corev1.Service)
	if !ok || !ev.Deleted || ev.Resource.Group != "" || ev.Resource.Resource != "services" {
		return
	}
	s.releaseIPs(ctx, svc.Spec.ClusterIPs)
	if s.cfg.NodePorts != nil && s.services.releaseOnce(svc.UID) {
		s.releaseNodePorts(svc)
	}
}

// updateServiceIPs handles a Service update that changes whether it has a
// cluster IP: one turning from ExternalName into another type gets one as
// on create (undo gives it back when the update fails), one turning into
// ExternalName gives its addresses back once the update is written
// (release).
func (s *Server) updateServiceIPs(ctx context.Context, res *registry.Resource, obj, old runtime.Object, dryRun bool) (undo, release func(), err error) {
	nothing := func() {}
	svc, ok := obj.(*corev1.Service)
	oldSvc, oldOK := old.(*corev1.Service)
	if !ok || !oldOK || s.cfg.ClusterIPs == nil || !isServices(res) {
		return nothing, nothing, nil
	}
	wasExternal, isExternal := oldSvc.Spec.Type == corev1.ServiceTypeExternalName, svc.Spec.Type == corev1.ServiceTypeExternalName
	switch {
	case wasExternal && !isExternal:
		undo, err := s.allocateServiceIPs(ctx, res, obj, dryRun)
		return undo, nothing, err
	case !wasExternal && isExternal:
		return nothing, func() { s.releaseIPs(ctx, oldSvc.Spec.ClusterIPs) }, nil
	}
	return nothing, nothing, nil
}

func (s *Server) releaseIPs(ctx context.Context, ips []string) {
	if s.cfg.ClusterIPs == nil {
		return
	}
	for _, ip := range ips {
		if parsed := net.ParseIP(ip); parsed != nil {
			s.releaseIP(ctx, parsed)
		}
	}
}
