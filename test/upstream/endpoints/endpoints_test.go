// Package endpoints compares admitd's Endpoints controller
// (internal/controllers/endpoints) with upstream's pkg/controller/endpoint
// and pkg/api/v1/endpoints on the same inputs: the repacking and order of
// subsets, and the whole Endpoints object a Service and its pods give
// (addresses and readiness, ports resolved from named container ports,
// IP families, hostnames, labels, the trigger-time annotation and the
// truncation at 1000 addresses with its over-capacity annotation).
package endpoints

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	endpointsliceutil "k8s.io/endpointslice/util"
	upstreamendpoints "k8s.io/kubernetes/pkg/api/v1/endpoints"
	"k8s.io/kubernetes/pkg/controller/endpoint"

	ours "github.com/admitd/admitd/internal/controllers/endpoints"
)

// randomSubsets are subsets as the controller builds them before
// repacking: one address (ready or not) on zero or one port each, drawn
// from small pools so that addresses and ports repeat.
func randomSubsets(r *rand.Rand) []corev1.EndpointSubset {
	n := r.IntN(12)
	out := make([]corev1.EndpointSubset, 0, n)
	for range n {
		i := r.IntN(5)
		addr := corev1.EndpointAddress{IP: fmt.Sprintf("10.0.0.%d", i)}
		if r.IntN(4) > 0 {
			addr.TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("uid-%d", r.IntN(2)))}
		}
		s := corev1.EndpointSubset{}
		if r.IntN(2) == 0 {
			s.Addresses = []corev1.EndpointAddress{addr}
		} else {
			s.NotReadyAddresses = []corev1.EndpointAddress{addr}
		}
		for range r.IntN(3) {
			s.Ports = append(s.Ports, corev1.EndpointPort{Name: fmt.Sprintf("p%d", r.IntN(3)), Port: int32(80 + r.IntN(3)), Protocol: corev1.ProtocolTCP})
		}
		out = append(out, s)
	}
	return out
}

// TestRepackSubsetsMatchesUpstream: 20,000 random lists of subsets repack
// to the same subsets in the same order.
func TestRepackSubsetsMatchesUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	mismatches := 0
	for i := range 20000 {
		in := randomSubsets(r)
		want := upstreamendpoints.RepackSubsets(deepCopy(in))
		got := ours.RepackSubsets(deepCopy(in))
		if d := cmp.Diff(want, got); d != "" {
			mismatches++
			if mismatches <= 3 {
				t.Errorf("case %d: RepackSubsets(%+v) differs (-upstream +ours):\n%s", i, in, d)
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of 20000 differ", mismatches)
	}
}

func deepCopy(in []corev1.EndpointSubset) []corev1.EndpointSubset {
	out := make([]corev1.EndpointSubset, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

var created = metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))

// randomService is a Service selecting app=web with random ports (by
// number or by container port name), cluster IP (set, IPv6, headless),
// families and publishNotReadyAddresses.
func randomService(r *rand.Rand) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "svc-uid", CreationTimestamp: created,
		Labels: map[string]string{"app": "web", "tier": fmt.Sprint(r.IntN(2))}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, PublishNotReadyAddresses: r.IntN(4) == 0}}
	switch r.IntN(4) {
	case 0:
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	case 1:
		svc.Spec.ClusterIP, svc.Spec.IPFamilies = "fd00::10", []corev1.IPFamily{corev1.IPv6Protocol}
	case 2:
		svc.Spec.ClusterIP = "10.96.0.10"
	default:
		svc.Spec.ClusterIP, svc.Spec.IPFamilies = "10.96.0.10", []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	}
	for i := range r.IntN(3) {
		p := corev1.ServicePort{Name: fmt.Sprintf("port%d", i), Port: int32(80 + i), Protocol: corev1.ProtocolTCP}
		if r.IntN(2) == 0 {
			p.TargetPort = intstr.FromString([]string{"http", "metrics", "missing"}[r.IntN(3)])
		} else {
			p.TargetPort = intstr.FromInt32(int32(8080 + r.IntN(2)))
		}
		if r.IntN(3) == 0 {
			p.Protocol = corev1.ProtocolUDP
		}
		svc.Spec.Ports = append(svc.Spec.Ports, p)
	}
	if len(svc.Spec.Ports) == 1 && r.IntN(2) == 0 {
		svc.Spec.Ports[0].Name = ""
	}
	return svc
}

// randomPod is a pod labelled app=web (mostly) with random IPs, phase,
// readiness, deletion, hostname and named container ports.
func randomPod(r *rand.Rand, i int) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "ns", UID: types.UID(fmt.Sprintf("pod-uid-%d", i)),
		Labels: map[string]string{"app": "web"}, ResourceVersion: "1"},
		Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", r.IntN(3)), Containers: []corev1.Container{{Name: "c",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}, {Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolUDP}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if r.IntN(10) == 0 {
		p.Labels["app"] = "other"
	}
	v4, v6 := fmt.Sprintf("10.244.%d.%d", i/250, i%250+2), fmt.Sprintf("fd00::%x", i+2)
	switch r.IntN(5) {
	case 0:
		p.Status.PodIPs = []corev1.PodIP{{IP: v6}}
	case 1:
		p.Status.PodIPs = []corev1.PodIP{{IP: v4}, {IP: v6}}
	case 2:
		p.Status.PodIPs = nil
	default:
		p.Status.PodIPs = []corev1.PodIP{{IP: v4}}
	}
	if len(p.Status.PodIPs) > 0 {
		p.Status.PodIP = p.Status.PodIPs[0].IP
	}
	ready := corev1.ConditionTrue
	if r.IntN(3) == 0 {
		ready = corev1.ConditionFalse
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.NewTime(created.Add(time.Duration(r.IntN(100)) * time.Second))}}
	switch r.IntN(8) {
	case 0:
		p.Status.Phase = corev1.PodSucceeded
	case 1:
		now := metav1.NewTime(created.Add(time.Hour))
		p.DeletionTimestamp = &now
	}
	if r.IntN(4) == 0 {
		p.Spec.Hostname, p.Spec.Subdomain = fmt.Sprintf("h%d", i), "web"
	}
	return p
}

// upstreamEndpoints runs upstream's Endpoints controller on svc and pods
// (a fake clientset and its informers) and returns the Endpoints it
// creates.
func upstreamEndpoints(t *testing.T, svc *corev1.Service, pods []*corev1.Pod) *corev1.Endpoints {
	t.Helper()
	objs := []runtime.Object{svc}
	for _, p := range pods {
		objs = append(objs, p)
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c := endpoint.NewEndpointController(ctx, factory.Core().V1().Pods(), factory.Core().V1().Services(), factory.Core().V1().Endpoints(), client, 0)
	factory.Start(ctx.Done())
	go c.Run(ctx, 1)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ep, err := client.CoreV1().Endpoints(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
		if err == nil {
			ep.TypeMeta, ep.ManagedFields = metav1.TypeMeta{}, nil // the fake's, not the controller's
			return ep
		}
		if !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	t.Fatal("upstream's controller wrote no Endpoints")
	return nil
}

// oursEndpoints is what admitd's controller writes on its first sync of
// svc with pods.
func oursEndpoints(svc *corev1.Service, pods []*corev1.Pod) *corev1.Endpoints {
	var matched []*corev1.Pod
	for _, p := range pods {
		if p.Labels["app"] == "web" {
			matched = append(matched, p)
		}
	}
	trigger := endpointsliceutil.NewTriggerTimeTracker().ComputeEndpointLastChangeTriggerTime(svc.Namespace, svc, matched)
	current := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Labels: svc.Labels}}
	ep := ours.DesiredEndpoints(current, svc, ours.ServiceSubsets(svc, matched), trigger)
	ep.Namespace = svc.Namespace
	return ep
}

// TestEndpointsMatchUpstream: 300 random Services with up to 12 pods, and
// 6 with 900 to 1,400 pods (truncated past 1000), give the same Endpoints
// from upstream's controller and from ours.
func TestEndpointsMatchUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	mismatches, cases, truncated := 0, 0, 0
	check := func(name string, nPods int, large bool) {
		cases++
		svc := randomService(r)
		pods := make([]*corev1.Pod, nPods)
		for i := range pods {
			pods[i] = randomPod(r, i)
		}
		if large { // most pods in: an IPv4 Service with a port, running IPv4 pods
			svc.Spec.ClusterIP, svc.Spec.IPFamilies = "10.96.0.10", nil
			svc.Spec.Ports = []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}
			for i, p := range pods {
				ip := fmt.Sprintf("10.244.%d.%d", i/250, i%250+2)
				p.Status.PodIP, p.Status.PodIPs, p.Status.Phase, p.DeletionTimestamp = ip, []corev1.PodIP{{IP: ip}}, corev1.PodRunning, nil
			}
		}
		want := upstreamEndpoints(t, svc, pods)
		got := oursEndpoints(svc, pods)
		if _, ok := want.Annotations[corev1.EndpointsOverCapacity]; ok {
			truncated++
		}
		if d := cmp.Diff(want, got); d != "" {
			mismatches++
			if mismatches <= 3 {
				t.Errorf("%s: Endpoints differ (-upstream +ours):\n%s", name, d)
			}
		}
	}
	for i := range 300 {
		check(fmt.Sprintf("case %d", i), r.IntN(13), false)
	}
	for i := range 6 {
		check(fmt.Sprintf("large case %d", i), 900+r.IntN(500), true)
	}
	if mismatches > 0 {
		t.Errorf("%d of %d differ", mismatches, cases)
	}
	if truncated == 0 {
		t.Error("no case was over capacity: the truncation went untested")
	}
}
