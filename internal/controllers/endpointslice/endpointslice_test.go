package endpointslice

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// start runs an in-process API server over memory storage with the
// controller, and returns an administrator's client.
func start(t *testing.T) kubernetes.Interface {
	t.Helper()
	s := controllertest.Start(t)
	client, recorder := s.Controller(User, Component)
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return s.Admin
}

func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	controllertest.Eventually(t, 20*time.Second, what, cond)
}

// runPod creates a ready pod labelled app=web on a node with a container
// port named http (8080).
func runPod(t *testing.T, c kubernetes.Interface, i int) {
	t.Helper()
	ctx := t.Context()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node-0", Containers: []corev1.Container{{Name: "c", Image: "nginx",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}}}
	created, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip := fmt.Sprintf("10.244.%d.%d", i/200, i%200+2)
	created.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}}
	if _, err := c.CoreV1().Pods("default").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A Service of 101 pods gets two slices (at most 100 endpoints each)
// named from generateName "web-", labelled, owned by the Service, with
// the port its named targetPort resolves to and each endpoint's node and
// zone (a pod on a node not known is left out until it is); a
// Service without selector gets none.
func TestSlicesFollowServiceAndPods(t *testing.T) {
	c := start(t)
	ctx := t.Context()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0", Labels: map[string]string{corev1.LabelTopologyZone: "zone-a"}}}
	if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 101 {
		runPod(t, c, i)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: intstr.FromString("http")}}}}
	created, err := c.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plain := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := c.CoreV1().Services("default").Create(ctx, plain, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var list *discovery.EndpointSliceList
	eventually(t, "two slices of 101 endpoints", func() (bool, string) {
		list, err = c.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=web"})
		if err != nil {
			return false, err.Error()
		}
		var sizes []int
		for _, s := range list.Items {
			sizes = append(sizes, len(s.Endpoints))
		}
		return twoSlicesOf101(sizes), fmt.Sprint(sizes)
	})
	for _, s := range list.Items {
		if s.GenerateName != "web-" || s.Labels[discovery.LabelManagedBy] != ManagedBy || s.AddressType != discovery.AddressTypeIPv4 {
			t.Errorf("slice %s: generateName %q, labels %v, addressType %s", s.Name, s.GenerateName, s.Labels, s.AddressType)
		}
		if ref := metav1.GetControllerOf(&s); ref == nil || ref.UID != created.UID || ref.Kind != "Service" {
			t.Errorf("slice %s: controller %v, want the Service", s.Name, ref)
		}
		if len(s.Ports) != 1 || *s.Ports[0].Port != 8080 || *s.Ports[0].Name != "web" {
			t.Errorf("slice %s: ports %v, want web:8080", s.Name, s.Ports)
		}
		if e := s.Endpoints[0]; e.NodeName == nil || *e.NodeName != "node-0" || e.Zone == nil || *e.Zone != "zone-a" || !*e.Conditions.Ready || e.TargetRef.Kind != "Pod" {
			t.Errorf("slice %s: endpoint %+v", s.Name, e)
		}
	}
	plainSlices, err := c.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=plain"})
	if err != nil || len(plainSlices.Items) != 0 {
		t.Errorf("slices of a Service without selector: %v, %v; want none", plainSlices, err)
	}
}

// twoSlicesOf101 says whether sizes are two slices of at most 100 that
// hold the 101 endpoints: how they split depends on how many pods the
// first sync saw (96 then 5 more gives 96 and 5, as upstream's
// reconciler places a remainder only in a slice it fits whole).
func twoSlicesOf101(sizes []int) bool {
	return len(sizes) == 2 && sizes[0]+sizes[1] == 101 && sizes[0] <= 100 && sizes[1] <= 100
}
