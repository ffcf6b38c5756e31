package apiserver

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// Service node ports (and health-check node ports) from Config.NodePorts,
// as upstream's Service storage allocates them.

func shouldAllocateNodePorts(svc *corev1.Service) bool {
	t := svc.Spec.Type
	return t == corev1.ServiceTypeNodePort || (t == corev1.ServiceTypeLoadBalancer && ptr.Deref(svc.Spec.AllocateLoadBalancerNodePorts, true))
}

func needsHealthCheckPort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// nodePortsOf are the node ports svc holds, the health-check one included.
func nodePortsOf(svc *corev1.Service) map[int]bool {
	out := map[int]bool{}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			out[int(p.NodePort)] = true
		}
	}
	if svc.Spec.HealthCheckNodePort != 0 {
		out[int(svc.Spec.HealthCheckNodePort)] = true
	}
	return out
}

// allocateNodePorts gives svc the node ports it asks for and those it
// needs, except the ports in held (what the stored object already holds,
// on update); undo gives back what it took.
func (s *Server) allocateNodePorts(svc *corev1.Service, held map[int]bool) (undo func(), err error) {
	alloc := s.cfg.NodePorts
	var taken []int
	undo = func() {
		for _, p := range taken {
			if !s.services.heldByStored(p) {
				alloc.Release(p)
			}
		}
	}
	take := func(port int32, path *field.Path) (int32, error) {
		if port != 0 && held[int(port)] {
			return port, nil
		}
		if port != 0 {
			if err := alloc.Allocate(int(port)); err != nil {
				return 0, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name,
					field.ErrorList{field.Invalid(path, port, err.Error())})
			}
		} else {
			next, err := alloc.AllocateNext()
			if err != nil {
				return 0, apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
			}
			port = int32(next)
		}
		taken = append(taken, int(port))
		return port, nil
	}
	if err := s.fillServicePorts(svc, take); err != nil {
		undo()
		return nil, err
	}
	if needsHealthCheckPort(svc) {
		hc, err := take(svc.Spec.HealthCheckNodePort, field.NewPath("spec", "healthCheckNodePort"))
		if err != nil {
			undo()
			return nil, err
		}
		svc.Spec.HealthCheckNodePort = hc
	}
	return undo, nil
}

// fillServicePorts runs take on the node port of each port that has or
// needs one; ports sharing a port number (TCP and UDP) share a node port.
func (s *Server) fillServicePorts(svc *corev1.Service, take func(int32, *field.Path) (int32, error)) error {
	byPort := map[int32]int32{}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		if t := svc.Spec.Type; t != corev1.ServiceTypeNodePort && t != corev1.ServiceTypeLoadBalancer {
			return nil
		}
		if sp.NodePort == 0 && !shouldAllocateNodePorts(svc) {
			continue
		}
		if np, ok := byPort[sp.Port]; ok && (sp.NodePort == 0 || sp.NodePort == np) {
			sp.NodePort = np
			continue
		}
		if sp.NodePort == 0 {
			sp.NodePort = requestedNodePort(sp.Port, svc.Spec.Ports[i:])
		}
		np, err := take(sp.NodePort, field.NewPath("spec", "ports").Index(i).Child("nodePort"))
		if err != nil {
			return err
		}
		sp.NodePort, byPort[sp.Port] = np, np
	}
	return nil
}

// requestedNodePort is the node port a later entry of ports asks for the
// same port number, or 0.
func requestedNodePort(port int32, ports []corev1.ServicePort) int32 {
	for _, p := range ports {
		if p.Port == port && p.NodePort != 0 {
			return p.NodePort
		}
	}
	return 0
}

// updateNodePorts, after the update's preparation carried the stored node
// ports over, takes the new ones; release gives back, once the update is
// written, those the object no longer holds.
func (s *Server) updateNodePorts(res *registry.Resource, obj, old runtime.Object) (undo, release func(), err error) {
	nothing := func() {}
	svc, ok := obj.(*corev1.Service)
	oldSvc, oldOK := old.(*corev1.Service)
	if !ok || !oldOK || s.cfg.NodePorts == nil || !isServices(res) {
		return nothing, nothing, nil
	}
	held := nodePortsOf(oldSvc)
	if undo, err = s.allocateNodePorts(svc, held); err != nil {
		return nil, nil, err
	}
	release = func() {
		kept := nodePortsOf(svc)
		for p := range nodePortsOf(oldSvc) {
			if !kept[p] {
				s.cfg.NodePorts.Release(p)
			}
		}
	}
	return undo, release, nil
}
