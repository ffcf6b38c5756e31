package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/admitd/admitd/internal/admissionsource"
)

// serviceResolver finds where to dial a webhook behind a Service: the
// --service-map file first (re-read when it changes), else the Service
// object (ExternalName host, or cluster IP).
type serviceResolver struct {
	mapPath  string
	services func(ctx context.Context, namespace, name string) (*corev1.Service, error)
	slices   func(ctx context.Context, namespace, service string) ([]*discoveryv1.EndpointSlice, error)

	mu      sync.Mutex
	modTime time.Time
	entries map[string]string
}

// ResolveService returns host:port for the service.
func (r *serviceResolver) ResolveService(namespace, name string, port int32) (string, error) {
	host := name + "." + namespace + ".svc"
	if addr, ok := r.lookupMap(host); ok {
		return addr, nil
	}
	if r.services == nil {
		return "", fmt.Errorf("service %q not found", name)
	}
	svc, err := r.services(context.Background(), namespace, name)
	if err != nil {
		return "", fmt.Errorf("service %q not found", name)
	}
	p := strconv.Itoa(int(port))
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return net.JoinHostPort(svc.Spec.ExternalName, p), nil
	}
	if addr, ok := r.endpointFor(svc, port); ok {
		return addr, nil
	}
	if svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		return net.JoinHostPort(svc.Spec.ClusterIP, p), nil
	}
	return "", fmt.Errorf("service %q has no address to dial", name)
}

// endpointFor picks a ready endpoint of the service's EndpointSlices for
// the service port, matching the slice port by the service port's name.
func (r *serviceResolver) endpointFor(svc *corev1.Service, port int32) (string, bool) {
	if r.slices == nil {
		return "", false
	}
	portName := ""
	for _, sp := range svc.Spec.Ports {
		if sp.Port == port {
			portName = sp.Name
		}
	}
	slices, err := r.slices(context.Background(), svc.Namespace, svc.Name)
	if err != nil {
		return "", false
	}
	for _, es := range slices {
		for _, ep := range es.Endpoints {
			if len(ep.Addresses) == 0 || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
				continue
			}
			for _, p := range es.Ports {
				if p.Port != nil && (p.Name == nil && portName == "" || p.Name != nil && *p.Name == portName) {
					return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*p.Port))), true
				}
			}
		}
	}
	return "", false
}

// lookupMap reads the map file if it changed since the last read.
func (r *serviceResolver) lookupMap(host string) (string, bool) {
	if r.mapPath == "" {
		return "", false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if fi, err := os.Stat(r.mapPath); err == nil && !fi.ModTime().Equal(r.modTime) {
		if data, err := os.ReadFile(r.mapPath); err == nil {
			entries := map[string]string{}
			if json.Unmarshal(data, &entries) == nil {
				r.entries, r.modTime = entries, fi.ModTime()
			}
		}
	}
	addr, ok := r.entries[host]
	return addr, ok
}

// newServiceResolver reads Services through lookup when the map has no entry.
func newServiceResolver(mapPath string, api *admissionsource.ServiceLookup) *serviceResolver {
	r := &serviceResolver{mapPath: mapPath}
	if api != nil {
		r.services, r.slices = api.GetService, api.EndpointSlices
	}
	return r
}
