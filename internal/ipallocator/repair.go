package ipallocator

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// RepairInterval is how often Repair runs, as kube-apiserver's repair
// loops (not a flag there either).
const RepairInterval = 3 * time.Minute

// leakGrace is how old an IPAddress without its Service must be before
// Repair deletes it: a create in flight stores its IPAddress first.
const leakGrace = 60 * time.Second

// Repair brings the IPAddresses in line with the stored Services, as
// kube-apiserver's IP repair controller: a Service's cluster IP within a
// ServiceCIDR without its IPAddress (stored by a server that allocated in
// memory, or lost) gets one, one whose IPAddress names another object is
// given it back when that object is no Service that exists; an
// IPAddress the allocator made whose Service is gone, or no longer holds
// its address, is deleted once older than a minute. What upstream reports
// as events is logged.
func (a *Allocator) Repair(ctx context.Context, services *registry.Resource, log *slog.Logger) error {
	// IPAddresses first: an address allocated between the two reads is
	// then a Service's address without an IPAddress, whose create fails
	// harmlessly, never an IPAddress without its Service.
	objs, err := a.addresses.List(ctx, "", nil)
	if err != nil {
		return err
	}
	_, svcObjs, err := layout.List(ctx, a.store, services, 0)
	if err != nil {
		return err
	}
	byKey := map[[2]string]*corev1.Service{}
	for _, obj := range svcObjs {
		if svc, ok := obj.(*corev1.Service); ok {
			byKey[[2]string{svc.Namespace, svc.Name}] = svc
		}
	}
	addrs := map[string]*networkingv1.IPAddress{}
	for _, obj := range objs {
		if ip, ok := obj.(*networkingv1.IPAddress); ok {
			addrs[ip.Name] = ip
		}
	}
	var errs []error
	for _, svc := range byKey {
		errs = append(errs, a.repairService(ctx, svc, addrs, byKey, log))
	}
	for _, ip := range addrs {
		errs = append(errs, a.repairIPAddress(ctx, ip, byKey, log))
	}
	return errors.Join(errs...)
}

// repairService gives each cluster IP of svc its IPAddress.
func (a *Allocator) repairService(ctx context.Context, svc *corev1.Service, addrs map[string]*networkingv1.IPAddress, services map[[2]string]*corev1.Service, log *slog.Logger) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return nil
	}
	var errs []error
	for _, clusterIP := range svc.Spec.ClusterIPs {
		addr, err := netip.ParseAddr(clusterIP)
		if err != nil || familyOf(addr) != a.family {
			continue
		}
		held, err := a.Contains(ctx, addr)
		if err != nil {
			return err
		}
		if !held {
			log.Warn("cluster IP is not within any configured Service CIDR; please recreate the service", "service", svc.Namespace+"/"+svc.Name, "ip", clusterIP)
			continue
		}
		name := addr.String()
		ip, ok := addrs[name]
		switch {
		case !ok:
			log.Warn("cluster IP is not allocated; repairing", "service", svc.Namespace+"/"+svc.Name, "ip", name)
			if err := a.create(ctx, newIPAddress(name, a.family, svc, a.timestamp())); err != nil && !errors.Is(err, ErrAllocated) {
				errs = append(errs, err)
			}
		case !refersTo(ip, svc):
			// Another existing Service keeps it (its IPAddress's repair
			// deletes it if that Service does not hold the address).
			if other := otherService(ip, services); other != nil {
				if slices.Contains(other.Spec.ClusterIPs, name) {
					log.Warn("cluster IP was assigned to multiple services; please recreate the service", "service", svc.Namespace+"/"+svc.Name, "ip", name,
						"other", other.Namespace+"/"+other.Name)
				}
				continue
			}
			log.Warn("cluster IP has a wrong reference; repairing", "service", svc.Namespace+"/"+svc.Name, "ip", name)
			errs = append(errs, a.recreate(ctx, name, svc))
		case !hasLabels(ip, a.family):
			errs = append(errs, a.recreate(ctx, name, svc))
		}
	}
	return errors.Join(errs...)
}

// repairIPAddress deletes an IPAddress of the allocator's that its Service
// does not hold (after a grace), or that no longer refers to a Service.
func (a *Allocator) repairIPAddress(ctx context.Context, ip *networkingv1.IPAddress, services map[[2]string]*corev1.Service, log *slog.Logger) error {
	if ip.Labels[networkingv1.LabelManagedBy] != ControllerName {
		return nil
	}
	ref := ip.Spec.ParentRef
	if ref == nil || ref.Group != "" || ref.Resource != "services" {
		log.Warn("IPAddress appears to have been modified, not referencing a Service: cleaning up", "ipaddress", ip.Name)
		return a.remove(ctx, ip.Name)
	}
	age := a.now().Sub(ip.CreationTimestamp.Time)
	svc := services[[2]string{ref.Namespace, ref.Name}]
	switch {
	case svc == nil && age <= leakGrace:
		return nil
	case svc == nil:
		log.Warn("IPAddress appears to have leaked: cleaning up", "ipaddress", ip.Name, "service", ref.Namespace+"/"+ref.Name)
		return a.remove(ctx, ip.Name)
	case slices.Contains(svc.Spec.ClusterIPs, ip.Name):
		return nil
	case svc.Spec.Type == corev1.ServiceTypeExternalName && age < leakGrace:
		return nil
	case ip.CreationTimestamp.After(svc.CreationTimestamp.Time) && age < 5*time.Second:
		return nil
	}
	log.Warn("IPAddress has a wrong reference: cleaning up", "ipaddress", ip.Name, "service", svc.Namespace+"/"+svc.Name)
	return a.remove(ctx, ip.Name)
}

// recreate replaces the IPAddress name by one held by svc.
func (a *Allocator) recreate(ctx context.Context, name string, svc *corev1.Service) error {
	if err := a.remove(ctx, name); err != nil {
		return err
	}
	return a.create(ctx, newIPAddress(name, a.family, svc, a.timestamp()))
}

func refersTo(ip *networkingv1.IPAddress, svc *corev1.Service) bool {
	ref := ip.Spec.ParentRef
	return ref != nil && ref.Group == "" && ref.Resource == "services" && ref.Namespace == svc.Namespace && ref.Name == svc.Name
}

// otherService is the Service ip refers to, if it is a Service that
// exists.
func otherService(ip *networkingv1.IPAddress, services map[[2]string]*corev1.Service) *corev1.Service {
	ref := ip.Spec.ParentRef
	if ref == nil || ref.Group != "" || ref.Resource != "services" {
		return nil
	}
	return services[[2]string{ref.Namespace, ref.Name}]
}

func hasLabels(ip *networkingv1.IPAddress, family corev1.IPFamily) bool {
	return ip.Labels[networkingv1.LabelIPAddressFamily] == string(family) && ip.Labels[networkingv1.LabelManagedBy] == ControllerName
}

func familyOf(addr netip.Addr) corev1.IPFamily {
	if addr.Unmap().Is4() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}
