package apiserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream"

	"github.com/admitd/admitd/internal/registry"
)

// The subresources kube-apiserver serves by reaching a kubelet or a pod:
// pods/log, exec, attach, portforward and proxy, nodes/proxy and
// services/proxy. admitd runs no kubelet and reaches no pod network, so it
// answers what kube-apiserver answers up to the point where it would dial
// out (the pod, its container, its node, the node's address, the upgrade
// request), and then that the backend cannot be reached.

var (
	nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")
)

// kubeletPort is the port kube-apiserver dials a kubelet on when the node
// reports none (--kubelet-port).
const kubeletPort = 10250

// servePodLog answers GET pods/{name}/log: as upstream, an empty log for a
// pod not yet scheduled, else the error of reaching its kubelet.
func (s *Server) servePodLog(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	pod, err := s.podFor(r.Context(), res, rq)
	if err == nil {
		var container string
		if container, err = validateContainer(r.URL.Query().Get("container"), pod); err == nil {
			if pod.Spec.NodeName == "" {
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusOK)
				return
			}
			err = s.kubeletUnreachable(r.Context(), pod.Spec.NodeName, fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container))
		}
	}
	writeError(w, r, err)
}

// connectBackendError is the answer to an admitted connect request once
// the object exists: upstream's checks of the pod, node or service, then
// the error of reaching the kubelet or pod.
func (s *Server) connectBackendError(r *http.Request, rq *request, res *registry.Resource, obj runtime.Object) error {
	ctx := r.Context()
	switch o := obj.(type) {
	case *corev1.Pod:
		return s.podConnectError(ctx, r, rq, o)
	case *corev1.Node:
		return s.nodeProxyError(ctx, o, r)
	}
	return apierrors.NewBadRequest("Upgrade request required")
}

// podConnectError follows upstream's ExecLocation, AttachLocation,
// PortForwardLocation and ResourceLocation (proxy).
func (s *Server) podConnectError(ctx context.Context, r *http.Request, rq *request, pod *corev1.Pod) error {
	sub := rq.info.Subresource
	if sub == "proxy" {
		if ip := net.ParseIP(pod.Status.PodIP); ip == nil || !ip.IsGlobalUnicast() {
			return apierrors.NewBadRequest("address not allowed")
		}
		return apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: admitd reaches no pod network (pod IP %s)", pod.Status.PodIP))
	}
	container := ""
	if sub == "exec" || sub == "attach" {
		var err error
		if container, err = validateContainer(r.URL.Query().Get("container"), pod); err != nil {
			return err
		}
	}
	if pod.Spec.NodeName == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	path := fmt.Sprintf("/%s/%s/%s/%s", sub, pod.Namespace, pod.Name, container)
	if sub == "portforward" {
		path = fmt.Sprintf("/portForward/%s/%s", pod.Namespace, pod.Name)
	}
	if _, _, err := s.kubeletAddress(ctx, pod.Spec.NodeName); err != nil {
		return err
	}
	if !httpstream.IsUpgradeRequest(r) {
		return apierrors.NewBadRequest("Upgrade request required")
	}
	return s.kubeletUnreachable(ctx, pod.Spec.NodeName, path)
}

// nodeProxyError follows upstream's node ResourceLocation: the node's
// kubelet address, then the kubelet.
func (s *Server) nodeProxyError(ctx context.Context, node *corev1.Node, r *http.Request) error {
	rest := ""
	if i := strings.Index(r.URL.Path, "/proxy"); i >= 0 {
		rest = r.URL.Path[i+len("/proxy"):]
	}
	return s.kubeletUnreachable(ctx, node.Name, rest)
}

// kubeletUnreachable is the error of a request for path on node's kubelet:
// the node's own errors (missing, no address) as upstream, else the 500
// upstream gives when the kubelet does not answer, naming the URL that
// admitd does not dial.
func (s *Server) kubeletUnreachable(ctx context.Context, nodeName, path string) error {
	host, port, err := s.kubeletAddress(ctx, nodeName)
	if err != nil {
		return err
	}
	u := "https://" + net.JoinHostPort(host, strconv.Itoa(port)) + path
	return fmt.Errorf("Get %q: admitd has no connection to kubelets", u)
}

// kubeletAddress is the address kube-apiserver would dial for node's
// kubelet: its preferred address (Hostname, InternalDNS, InternalIP,
// ExternalDNS, ExternalIP) and its kubelet endpoint port.
func (s *Server) kubeletAddress(ctx context.Context, nodeName string) (string, int, error) {
	res, ok := s.cat.Lookup(nodesGVR)
	if !ok {
		return "", 0, errNotFoundPath()
	}
	obj, err := s.getObject(ctx, res, "", nodeName)
	if err != nil {
		return "", 0, err
	}
	node := obj.(*corev1.Node)
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = kubeletPort
	}
	for _, t := range []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP, corev1.NodeExternalDNS, corev1.NodeExternalIP} {
		for _, a := range node.Status.Addresses {
			if a.Type == t {
				return a.Address, port, nil
			}
		}
	}
	return "", 0, fmt.Errorf("no preferred addresses found; known addresses: %v", node.Status.Addresses)
}

// podFor reads the pod of the request.
func (s *Server) podFor(ctx context.Context, res *registry.Resource, rq *request) (*corev1.Pod, error) {
	obj, err := s.getObject(ctx, res, rq.info.Namespace, rq.info.Name)
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("expected a Pod, got %T", obj))
	}
	return pod, nil
}

// validateContainer is upstream's choice of the container a log, exec or
// attach request is for.
func validateContainer(container string, pod *corev1.Pod) (string, error) {
	if container != "" {
		if !podHasContainer(pod, container) {
			return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", container, pod.Name))
		}
		return container, nil
	}
	switch len(pod.Spec.Containers) {
	case 1:
		return pod.Spec.Containers[0].Name, nil
	case 0:
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
	}
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", pod.Name, names))
}

func podHasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}
