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

	"github.com/admitd/admitd/internal/apiserver"
)

// serviceResolver finds where to dial a webhook behind a Service: the
// --service-map file first (re-read when it changes), else the Service
// object (ExternalName host, or cluster IP).
type serviceResolver struct {
	mapPath  string
	services func(ctx context.Context, namespace, name string) (*corev1.Service, error)

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
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		return net.JoinHostPort(svc.Spec.ExternalName, p), nil
	case svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone:
		return net.JoinHostPort(svc.Spec.ClusterIP, p), nil
	}
	return "", fmt.Errorf("service %q has no address to dial", name)
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
func newServiceResolver(mapPath string, api *apiserver.ServiceLookup) *serviceResolver {
	r := &serviceResolver{mapPath: mapPath}
	if api != nil {
		r.services = api.GetService
	}
	return r
}
