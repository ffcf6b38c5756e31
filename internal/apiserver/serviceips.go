package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/serviceip"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// Service cluster IPs: what upstream's Service storage does around the
// generic store (its BeginCreate hook and the release on delete), with the
// allocator of Config.ServiceIPs.

func isServices(res *registry.Resource) bool {
	return res.Group == "" && res.Resource == "services"
}

// allocateForCreate gives a Service being created its cluster IP, then its
// node ports; undo gives them back.
func (s *Server) allocateForCreate(res *registry.Resource, obj runtime.Object) (undo func(), err error) {
	undoIPs, err := s.allocateServiceIPs(res, obj)
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
// for, or a free one; undo gives it back (a failed or dry-run create).
// A clusterIP that does not parse, or a clusterIPs without clusterIP, is
// left to validation.
func (s *Server) allocateServiceIPs(res *registry.Resource, obj runtime.Object) (undo func(), err error) {
	nothing := func() {}
	svc, ok := obj.(*corev1.Service)
	alloc := s.cfg.ServiceIPs
	if !ok || alloc == nil || !isServices(res) || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nothing, nil
	}
	spec := &svc.Spec
	switch ip := spec.ClusterIP; {
	case ip == corev1.ClusterIPNone:
		return nothing, nil
	case ip == "" && len(spec.ClusterIPs) == 0:
		got, err := alloc.AllocateNext()
		if errors.Is(err, serviceip.ErrFull) {
			return nil, apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP for Service %q: %w", svc.Name, err))
		}
		if err != nil {
			return nil, err
		}
		spec.ClusterIP, spec.ClusterIPs = got.String(), []string{got.String()}
		return func() { s.undoIP(got) }, nil
	case ip != "" && net.ParseIP(ip) != nil:
		if len(spec.ClusterIPs) == 0 {
			spec.ClusterIPs = []string{ip}
		}
		parsed := net.ParseIP(ip)
		if isKubernetesService(svc) && parsed.Equal(alloc.Reserved()) {
			return nothing, nil // the address kept for it
		}
		if err := alloc.Allocate(parsed); err != nil {
			el := field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs"), spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %v: %v", ip, err))}
			return nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, el)
		}
		return func() { s.undoIP(parsed) }, nil
	}
	return nothing, nil
}

// undoIP gives back an address a create took, unless a stored Service
// (of another server) turned out to hold it meanwhile.
func (s *Server) undoIP(ip net.IP) {
	if !s.services.heldByStored(ipKey(ip)) {
		s.cfg.ServiceIPs.Release(ip)
	}
}

// isKubernetesService reports whether svc is default/kubernetes, the API
// server's own Service, for which the range's first address is kept.
func isKubernetesService(svc *corev1.Service) bool {
	return svc.Namespace == metav1.NamespaceDefault && svc.Name == "kubernetes"
}

// releaseServiceIPs gives back the cluster IPs of a deleted Service.
func (s *Server) releaseServiceIPs(ev WriteEvent) {
	svc, ok := ev.Object.(*corev1.Service)
	if !ok || !ev.Deleted || ev.Resource.Group != "" || ev.Resource.Resource != "services" {
		return
	}
	if s.services.releaseOnce(svc.UID) {
		s.releaseAddresses(svc)
	}
}

// releaseAddresses gives back svc's cluster IPs and node ports.
func (s *Server) releaseAddresses(svc *corev1.Service) {
	s.releaseIPs(svc.Spec.ClusterIPs)
	if s.cfg.NodePorts != nil {
		for p := range nodePortsOf(svc) {
			s.services.storedGone(portKey(p))
			s.cfg.NodePorts.Release(p)
		}
	}
}

// seedServiceIPs marks the cluster IPs of the stored Services as taken:
// the allocator's state is derived from storage at start.
func (s *Server) seedServiceIPs(ctx context.Context) error {
	res, ok := s.cat.Lookup(corev1.SchemeGroupVersion.WithResource("services"))
	if !ok {
		return nil
	}
	page, err := s.store.List(ctx, layout.ResourcePrefix(res), storage.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing services: %w", err)
	}
	for _, kv := range page.Items {
		obj, err := layout.Decode(res, kv)
		if err != nil {
			return err
		}
		if svc, ok := obj.(*corev1.Service); ok {
			s.markTaken(svc)
		}
	}
	s.services.mu.Lock()
	s.services.seeded = page.Revision
	s.services.mu.Unlock()
	return nil
}

// updateServiceIPs handles a Service update that changes whether it has a
// cluster IP: one turning from ExternalName into another type gets one as
// on create (undo gives it back when the update fails), one turning into
// ExternalName gives its addresses back once the update is written
// (release).
func (s *Server) updateServiceIPs(res *registry.Resource, obj, old runtime.Object) (undo, release func(), err error) {
	nothing := func() {}
	svc, ok := obj.(*corev1.Service)
	oldSvc, oldOK := old.(*corev1.Service)
	if !ok || !oldOK || s.cfg.ServiceIPs == nil || !isServices(res) {
		return nothing, nothing, nil
	}
	wasExternal, isExternal := oldSvc.Spec.Type == corev1.ServiceTypeExternalName, svc.Spec.Type == corev1.ServiceTypeExternalName
	switch {
	case wasExternal && !isExternal:
		undo, err := s.allocateServiceIPs(res, obj)
		return undo, nothing, err
	case !wasExternal && isExternal:
		return nothing, func() { s.releaseIPs(oldSvc.Spec.ClusterIPs) }, nil
	}
	return nothing, nothing, nil
}

func (s *Server) releaseIPs(ips []string) {
	if s.cfg.ServiceIPs == nil {
		return
	}
	for _, ip := range ips {
		if parsed := net.ParseIP(ip); parsed != nil {
			s.services.storedGone(ipKey(parsed))
			s.cfg.ServiceIPs.Release(parsed)
		}
	}
}

// markTaken marks what svc holds as taken; an address or port outside the
// ranges (they changed since) stays the Service's. One the allocator had
// already is noted as held by a stored Service, so that giving back an
// in-flight create's allocation of it does not free it.
func (s *Server) markTaken(svc *corev1.Service) {
	if s.cfg.ServiceIPs != nil {
		for _, ip := range svc.Spec.ClusterIPs {
			parsed := net.ParseIP(ip)
			if parsed != nil && errors.Is(s.cfg.ServiceIPs.Allocate(parsed), serviceip.ErrAllocated) {
				s.services.claimStored(ipKey(parsed))
			}
		}
	}
	if s.cfg.NodePorts != nil {
		for p := range nodePortsOf(svc) {
			if errors.Is(s.cfg.NodePorts.Allocate(p), serviceip.ErrPortAllocated) {
				s.services.claimStored(portKey(p))
			}
		}
	}
}
