package aggregator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// resolve returns the host:port to dial for an APIService's service, as
// kube-apiserver's resolvers: --service-map first (admitd's own), then
// default/kubernetes:443 to this server, then the cluster IP (an
// ExternalName's name) of the Service, or with endpoint routing a random
// ready endpoint of its EndpointSlices serving the service port's name.
func (a *Aggregator) resolve(ctx context.Context, ref *apiregistrationv1.ServiceReference) (string, error) {
	port := servicePort(ref)
	if a.o.MapService != nil {
		if hostPort, ok := a.o.MapService(ref.Name + "." + ref.Namespace + ".svc"); ok {
			return hostPort, nil
		}
	}
	if ref.Namespace == "default" && ref.Name == "kubernetes" && port == 443 && a.o.Self != nil {
		return a.o.Self(), nil
	}
	svc, err := a.o.Services.GetService(ctx, ref.Namespace, ref.Name)
	if err != nil {
		return "", err
	}
	if a.o.EndpointRouting {
		return a.resolveEndpoint(ctx, ref, svc, port)
	}
	return resolveCluster(ref.Name, svc, port)
}

func servicePort(ref *apiregistrationv1.ServiceReference) int32 {
	if ref.Port == nil {
		return 443
	}
	return *ref.Port
}

// resolveCluster is upstream's ResolveCluster.
func resolveCluster(name string, svc *corev1.Service, port int32) (string, error) {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		if svc.Spec.Type == corev1.ServiceTypeClusterIP && svc.Spec.ClusterIP == corev1.ClusterIPNone {
			return "", fmt.Errorf(`cannot route to service with ClusterIP "None"`)
		}
		sp, err := findServicePort(name, svc, port)
		if err != nil {
			return "", err
		}
		return net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(sp.Port))), nil
	case corev1.ServiceTypeExternalName:
		return net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port))), nil
	}
	return "", fmt.Errorf("unsupported service type %q", svc.Spec.Type)
}

func findServicePort(name string, svc *corev1.Service, port int32) (*corev1.ServicePort, error) {
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			return &svc.Spec.Ports[i], nil
		}
	}
	return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port, name))
}

// resolveEndpoint is upstream's ResolveEndpoint: a ready endpoint of the
// slices of the service's primary IP family first, picked at random.
func (a *Aggregator) resolveEndpoint(ctx context.Context, ref *apiregistrationv1.ServiceReference, svc *corev1.Service, port int32) (string, error) {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
	default:
		return "", fmt.Errorf("unsupported service type %q", svc.Spec.Type)
	}
	sp, err := findServicePort(ref.Name, svc, port)
	if err != nil {
		return "", err
	}
	slices, err := a.o.Services.EndpointSlices(ctx, ref.Namespace, ref.Name)
	if err != nil {
		return "", err
	}
	preferred := discoveryv1.AddressType("")
	if len(svc.Spec.IPFamilies) > 0 {
		preferred = discoveryv1.AddressType(svc.Spec.IPFamilies[0])
	}
	order := rand.Perm(len(slices))
	for _, pass := range []bool{true, false} {
		for _, i := range order {
			if s := slices[i]; (s.AddressType == preferred) == pass {
				if hostPort, ok := readyEndpoint(s, sp.Name); ok {
					return hostPort, nil
				}
			}
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", ref.Name))
}

// readyEndpoint picks, from a random start, a ready endpoint of the slice
// for the port named portName.
func readyEndpoint(s *discoveryv1.EndpointSlice, portName string) (string, bool) {
	for _, p := range s.Ports {
		if p.Name == nil || *p.Name != portName || p.Port == nil || len(s.Endpoints) == 0 {
			continue
		}
		offset := rand.IntN(len(s.Endpoints))
		for i := range s.Endpoints {
			ep := &s.Endpoints[(i+offset)%len(s.Endpoints)]
			if (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) || len(ep.Addresses) == 0 {
				continue
			}
			return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*p.Port))), true
		}
	}
	return "", false
}
