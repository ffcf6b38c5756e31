package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// BenchmarkPodsThroughControllers is issue 26's workload in process: a
// Deployment of b.N replicas (service=true: behind a Service), on 10
// simulated nodes, with every default controller running, until all b.N
// pods are available (created by the ReplicaSet controller, scheduled,
// bound, running and ready; in the Service's Endpoints and EndpointSlices).
// It reports the process's CPU and the growth of its live heap per pod;
// allocs/op are per pod too (the process's, all goroutines). Run with a
// fixed count, e.g. -benchtime=300x.
func BenchmarkPodsThroughControllers(b *testing.B) {
	for _, service := range []bool{false, true} {
		b.Run(fmt.Sprintf("service=%v", service), func(b *testing.B) { benchPods(b, service) })
	}
}

func benchPods(b *testing.B, service bool) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort = b.TempDir(), 0
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.SimulatedNodes = SimulatedNodesOptions{Enabled: true, Nodes: 10}
	s, err := Start(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	cfg, err := clientcmd.BuildConfigFromFlags("", s.KubeconfigPath)
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	c := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	labels := map[string]string{"app": "bench"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}}}
	if service {
		if _, err := c.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "bench"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(int32(b.N)), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
	time.Sleep(time.Second) // the nodes register and become ready
	heap0 := liveHeap()
	cpu0 := processCPU()
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := c.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for !allServing(ctx, c, b.N, service) {
		if time.Now().After(deadline) {
			b.Fatalf("timed out waiting for %d pods available (and in the Service's Endpoints and EndpointSlices: %v)", b.N, service)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/pod")
	b.ReportMetric(float64(liveHeap()-heap0)/1024/float64(b.N), "heap-KiB/pod")
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// allServing: the bench Deployment has n available pods, and (service)
// the bench Service's Endpoints and EndpointSlices list n ready addresses.
func allServing(ctx context.Context, c kubernetes.Interface, n int, service bool) bool {
	d, err := c.AppsV1().Deployments("default").Get(ctx, "bench", metav1.GetOptions{})
	if err != nil || d.Status.AvailableReplicas != int32(n) || d.Status.UpdatedReplicas != int32(n) {
		return false
	}
	if !service {
		return true
	}
	ep, err := c.CoreV1().Endpoints("default").Get(ctx, "bench", metav1.GetOptions{})
	if err != nil || len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != n {
		return false
	}
	slices, err := c.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=bench"})
	if err != nil {
		return false
	}
	ready := 0
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				ready++
			}
		}
	}
	return ready == n
}
