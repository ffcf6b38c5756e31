package aggregator

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/transport"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// The discovery check of an APIService: how many requests are tried at
// once (one success is enough), each's bound and the bound of waiting for
// one, as upstream's remote availability controller.
const (
	checkAttempts    = 5
	checkTimeout     = 5 * time.Second
	checkWaitTimeout = 6 * time.Second
)

// Check returns the Available condition of an APIService that names a
// service (its LastTransitionTime unset), as kube-aggregator's remote
// availability controller decides it: the Service must exist; a ClusterIP
// Service must have the port and EndpointSlices with a ready endpoint for
// that port's name; then GET /apis/<group>/<version> of the extension
// server, as system:kube-aggregator in system:masters through the front
// proxy, must answer 2xx.
func (a *Aggregator) Check(ctx context.Context, s *apiregistrationv1.APIService) apiregistrationv1.APIServiceCondition {
	ref := s.Spec.Service
	failed := func(status apiregistrationv1.ConditionStatus, reason, format string, args ...any) apiregistrationv1.APIServiceCondition {
		return apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	svc, err := a.o.CheckServices.GetService(ctx, ref.Namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		return failed(apiregistrationv1.ConditionFalse, "ServiceNotFound", "service/%s in %q is not present", ref.Name, ref.Namespace)
	case err != nil:
		return failed(apiregistrationv1.ConditionUnknown, "ServiceAccessError", "service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err)
	}
	if svc.Spec.Type == corev1.ServiceTypeClusterIP {
		port := servicePort(ref)
		i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == port })
		if i < 0 {
			return failed(apiregistrationv1.ConditionFalse, "ServicePortError", "service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port)
		}
		portName := svc.Spec.Ports[i].Name
		eps, err := a.o.CheckServices.EndpointSlices(ctx, ref.Namespace, ref.Name)
		switch {
		case err != nil:
			return failed(apiregistrationv1.ConditionUnknown, "EndpointsAccessError", "service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err)
		case len(eps) == 0:
			return failed(apiregistrationv1.ConditionFalse, "EndpointsNotFound", "cannot find endpointslices for service/%s in %q", ref.Name, ref.Namespace)
		case !hasAvailableEndpoint(portName, eps):
			return failed(apiregistrationv1.ConditionFalse, "MissingEndpoints", "endpointslices for service/%s in %q have no addresses with port name %q", ref.Name, ref.Namespace, portName)
		}
	}
	if err := a.checkDiscovery(ctx, s); err != nil {
		return failed(apiregistrationv1.ConditionFalse, "FailedDiscoveryCheck", "%s", err.Error())
	}
	return apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue, Reason: "Passed", Message: "all checks passed"}
}

// hasAvailableEndpoint: some slice has a ready (or not said unready)
// endpoint and a port named portName.
func hasAvailableEndpoint(portName string, eps []*discoveryv1.EndpointSlice) bool {
	return slices.ContainsFunc(eps, func(s *discoveryv1.EndpointSlice) bool {
		ready := slices.ContainsFunc(s.Endpoints, func(e discoveryv1.Endpoint) bool { return e.Conditions.Ready == nil || *e.Conditions.Ready })
		return ready && slices.ContainsFunc(s.Ports, func(p discoveryv1.EndpointPort) bool { return p.Name != nil && *p.Name == portName && p.Port != nil })
	})
}

// checkDiscovery sends the discovery request checkAttempts times at once
// and returns nil on the first success, else the last failure.
func (a *Aggregator) checkDiscovery(ctx context.Context, s *apiregistrationv1.APIService) error {
	rt, err := a.transport(s)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: rt, Timeout: checkTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	results := make(chan error, checkAttempts)
	for range checkAttempts {
		go func() { results <- a.discoveryAttempt(ctx, client, s) }()
	}
	var last error
	for range checkAttempts {
		if last = <-results; last == nil {
			return nil
		}
	}
	return last
}

func (a *Aggregator) discoveryAttempt(ctx context.Context, client *http.Client, s *apiregistrationv1.APIService) error {
	host, err := a.resolve(ctx, s.Spec.Service)
	if err != nil {
		return err
	}
	u := &url.URL{Scheme: "https", Host: host, Path: "/apis/" + s.Spec.Group + "/" + s.Spec.Version}
	if s.Name == "v1." {
		u.Path = "/api/" + s.Spec.Version
	}
	done := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			done <- err
			return
		}
		transport.SetAuthProxyHeaders(req, "system:kube-aggregator", "", []string{"system:masters"}, nil)
		resp, err := client.Do(req)
		if err != nil {
			done <- err
			return
		}
		resp.Body.Close()
		if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusMultipleChoices {
			done <- fmt.Errorf("bad status from %v: %d", u, resp.StatusCode)
			return
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("failing or missing response from %v: %w", u, err)
		}
		return nil
	case <-time.After(checkWaitTimeout):
		return fmt.Errorf("timed out waiting for %v", u)
	}
}
