package controllers

import (
	"context"
	"log/slog"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
)

// KubernetesService is the API server's own "kubernetes" Service in the
// default namespace, as kube-apiserver's kubernetesservice controller and
// its lease endpoint reconciler keep it: the Service (cluster IP the first
// address of the service range, port 443 "https" to the secure port) is
// created when missing and otherwise left alone; its Endpoints (label
// endpointslice.kubernetes.io/skip-mirror) list this server's address and
// port, and the EndpointSlice "kubernetes" mirrors them. Every
// KubernetesServiceInterval the three are checked again. With one server
// there is one address; on shutdown it is not removed (upstream removes
// its lease's address).
type KubernetesService struct {
	client    dynamic.Interface
	clusterIP net.IP
	publicIP  net.IP
	port      int32
	log       *slog.Logger
}

// KubernetesServiceInterval is how often the Service and its endpoints are
// reconciled (kube-apiserver's --endpoint-reconciler interval, 10 s).
const KubernetesServiceInterval = 10 * time.Second

const kubernetesServiceName = "kubernetes"

var (
	servicesGVR       = corev1.SchemeGroupVersion.WithResource("services")
	endpointsGVR      = corev1.SchemeGroupVersion.WithResource("endpoints")
	endpointSlicesGVR = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
)

// NewKubernetesService returns the controller for a server reachable at
// publicIP:port whose Service has clusterIP; it writes through client. A
// nil publicIP keeps the Service only.
func NewKubernetesService(client dynamic.Interface, clusterIP, publicIP net.IP, port int, log *slog.Logger) *KubernetesService {
	return &KubernetesService{client: client, clusterIP: clusterIP, publicIP: publicIP, port: int32(port), log: log}
}

// Run reconciles now and then every KubernetesServiceInterval until ctx ends.
func (c *KubernetesService) Run(ctx context.Context) {
	t := time.NewTicker(KubernetesServiceInterval)
	defer t.Stop()
	for {
		if err := c.Sync(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("syncing the kubernetes service", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync creates the Service if it is missing and brings its Endpoints and
// EndpointSlice to this server's address.
func (c *KubernetesService) Sync(ctx context.Context) error {
	if err := c.ensureService(ctx); err != nil || c.publicIP == nil {
		return err
	}
	ep, err := c.ensureEndpoints(ctx)
	if err != nil {
		return err
	}
	return c.ensureEndpointSlice(ctx, ep)
}

func (c *KubernetesService) ensureService(ctx context.Context) error {
	services := c.client.Resource(servicesGVR).Namespace(metav1.NamespaceDefault)
	_, err := services.Get(ctx, kubernetesServiceName, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	single := corev1.IPFamilyPolicySingleStack
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{"provider": "kubernetes", "component": "apiserver"}},
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443,
				TargetPort: intstr.FromInt32(c.port)}},
			ClusterIP:       c.clusterIP.String(),
			IPFamilyPolicy:  &single,
			SessionAffinity: corev1.ServiceAffinityNone,
			Type:            corev1.ServiceTypeClusterIP,
		},
	}
	err = createTyped(ctx, services, svc)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// ensureEndpoints brings the Endpoints to one subset of this server's
// address and port, with the skip-mirror label; it returns what is stored.
func (c *KubernetesService) ensureEndpoints(ctx context.Context) (*corev1.Endpoints, error) {
	client := c.client.Resource(endpointsGVR).Namespace(metav1.NamespaceDefault)
	u, err := client.Get(ctx, kubernetesServiceName, metav1.GetOptions{})
	found := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	ep := &corev1.Endpoints{}
	if found {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ep); err != nil {
			return nil, err
		}
	} else {
		ep.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"}
		ep.ObjectMeta = metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault}
	}
	want := []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: c.publicIP.String()}},
		Ports:     []corev1.EndpointPort{{Name: "https", Port: c.port, Protocol: corev1.ProtocolTCP}},
	}}
	if found && ep.Labels[discoveryv1.LabelSkipMirror] == "true" && apiequality.Semantic.DeepEqual(ep.Subsets, want) {
		return ep, nil
	}
	if ep.Labels == nil {
		ep.Labels = map[string]string{}
	}
	ep.Labels[discoveryv1.LabelSkipMirror] = "true"
	ep.Subsets = want
	if !found {
		err = createTyped(ctx, client, ep)
		if apierrors.IsAlreadyExists(err) {
			return ep, nil
		}
		return ep, err
	}
	return ep, updateRead(ctx, client, ep)
}

// ensureEndpointSlice mirrors ep into the EndpointSlice "kubernetes".
func (c *KubernetesService) ensureEndpointSlice(ctx context.Context, ep *corev1.Endpoints) error {
	client := c.client.Resource(endpointSlicesGVR).Namespace(metav1.NamespaceDefault)
	want := sliceFromEndpoints(ep)
	u, err := client.Get(ctx, kubernetesServiceName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		err = createTyped(ctx, client, want)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	cur := &discoveryv1.EndpointSlice{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cur); err != nil {
		return err
	}
	if cur.AddressType != want.AddressType {
		if err := client.Delete(ctx, kubernetesServiceName, metav1.DeleteOptions{}); err != nil {
			return err
		}
		return createTyped(ctx, client, want)
	}
	if apiequality.Semantic.DeepEqual(cur.Endpoints, want.Endpoints) && apiequality.Semantic.DeepEqual(cur.Ports, want.Ports) && apiequality.Semantic.DeepEqual(cur.Labels, want.Labels) {
		return nil
	}
	want.ResourceVersion = cur.ResourceVersion
	return updateRead(ctx, client, want)
}

// sliceFromEndpoints is the EndpointSlice of the Endpoints' first subset.
func sliceFromEndpoints(ep *corev1.Endpoints) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: ep.Name, Namespace: ep.Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: ep.Name}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	if len(ep.Subsets) == 0 {
		return s
	}
	sub := ep.Subsets[0]
	for _, p := range sub.Ports {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: &p.Name, Port: &p.Port, Protocol: &p.Protocol})
	}
	if allIPv6(sub.Addresses) {
		s.AddressType = discoveryv1.AddressTypeIPv6
	}
	ready := true
	s.Endpoints = []discoveryv1.Endpoint{}
	for _, a := range sub.Addresses {
		if (net.ParseIP(a.IP).To4() == nil) == (s.AddressType == discoveryv1.AddressTypeIPv6) {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a.IP},
				Conditions: discoveryv1.EndpointConditions{Ready: &ready}, TargetRef: a.TargetRef, NodeName: a.NodeName})
		}
	}
	return s
}

func allIPv6(addrs []corev1.EndpointAddress) bool {
	for _, a := range addrs {
		if net.ParseIP(a.IP).To4() != nil {
			return false
		}
	}
	return len(addrs) > 0
}

// createTyped creates the typed obj through client.
func createTyped(ctx context.Context, client dynamic.ResourceInterface, obj runtime.Object) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	_, err = client.Create(ctx, &unstructured.Unstructured{Object: content}, metav1.CreateOptions{})
	return err
}
