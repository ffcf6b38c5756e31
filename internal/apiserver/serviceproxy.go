package apiserver

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

var (
	servicesGVR       = corev1.SchemeGroupVersion.WithResource("services")
	endpointSlicesGVR = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
	podsGVR           = corev1.SchemeGroupVersion.WithResource("pods")
)

// serviceProxyError follows upstream's service ResourceLocation for the
// Service name in namespace, reached at port (a port number or name, ""
// for the unnamed one): a port number is looked up in the Service (which
// must exist) for its name; then the Service's EndpointSlices must have a
// ready endpoint of that port that is a pod of the namespace. admitd
// proxies to none, and says so.
func (s *Server) serviceProxyError(ctx context.Context, namespace, name, port string) error {
	if number, err := strconv.ParseInt(port, 10, 64); err == nil {
		var found bool
		if port, found, err = s.servicePortName(ctx, namespace, name, number); err != nil {
			return err
		} else if !found {
			return apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", number, name))
		}
	}
	slices, err := s.endpointSlicesOf(ctx, namespace, name)
	if err != nil {
		return err
	}
	if len(slices) == 0 {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	for _, slice := range slices {
		if ip := s.readyPodEndpoint(ctx, namespace, slice, port); ip != "" {
			return apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: admitd does not proxy to endpoint %s", ip))
		}
	}
	return apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
}

// servicePortName is the name of the Service's port number.
func (s *Server) servicePortName(ctx context.Context, namespace, name string, number int64) (string, bool, error) {
	res, ok := s.cat.Lookup(servicesGVR)
	if !ok {
		return "", false, errNotFoundPath()
	}
	obj, err := s.getObject(ctx, res, namespace, name)
	if err != nil {
		return "", false, err
	}
	for _, p := range obj.(*corev1.Service).Spec.Ports {
		if int64(p.Port) == number {
			return p.Name, true, nil
		}
	}
	return "", false, nil
}

// endpointSlicesOf are the EndpointSlices labelled as the Service's.
func (s *Server) endpointSlicesOf(ctx context.Context, namespace, service string) ([]*discoveryv1.EndpointSlice, error) {
	res, ok := s.cat.Lookup(endpointSlicesGVR)
	if !ok {
		return nil, nil
	}
	lq, err := parseListQuery(res, url.Values{"labelSelector": {discoveryv1.LabelServiceName + "=" + service}})
	if err != nil {
		return nil, err
	}
	objs, _, err := s.listObjects(ctx, res, namespace, lq)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	slices := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, obj := range objs {
		if slice, ok := obj.(*discoveryv1.EndpointSlice); ok {
			slices = append(slices, slice)
		}
	}
	return slices, nil
}

// readyPodEndpoint is the address of an endpoint of slice that has the
// port named port, is not unready, and is a pod of namespace that exists;
// "" when there is none.
func (s *Server) readyPodEndpoint(ctx context.Context, namespace string, slice *discoveryv1.EndpointSlice, port string) string {
	if !hasPortNamed(slice, port) {
		return ""
	}
	pods, ok := s.cat.Lookup(podsGVR)
	if !ok {
		return ""
	}
	for _, ep := range slice.Endpoints {
		if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
			continue
		}
		ref := ep.TargetRef
		if ref == nil || ref.Namespace != namespace {
			continue
		}
		if _, err := s.getObject(ctx, pods, namespace, ref.Name); err == nil {
			return ep.Addresses[0]
		}
	}
	return ""
}

func hasPortNamed(slice *discoveryv1.EndpointSlice, name string) bool {
	for _, p := range slice.Ports {
		if p.Name != nil && *p.Name == name && p.Port != nil {
			return true
		}
	}
	return false
}
