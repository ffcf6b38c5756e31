package endpoints

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	controllertest.Eventually(t, 10*time.Second, what, cond)
}

// runPod creates a pod labelled app=web with a container port named http
// (8080) and gives it ip and readiness, as a kubelet would.
func runPod(t *testing.T, c kubernetes.Interface, name, ip string, ready bool) {
	t.Helper()
	ctx := t.Context()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node-0", Containers: []corev1.Container{{Name: "c", Image: "nginx",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}}}
	created, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	created.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}}
	if _, err := c.CoreV1().Pods("default").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func describe(ep *corev1.Endpoints) string {
	s := fmt.Sprintf("labels=%v", ep.Labels)
	for _, ss := range ep.Subsets {
		s += " ["
		for _, a := range ss.Addresses {
			s += a.IP + " "
		}
		s += "| "
		for _, a := range ss.NotReadyAddresses {
			s += a.IP + " "
		}
		for _, p := range ss.Ports {
			s += fmt.Sprintf("%s:%d/%s", p.Name, p.Port, p.Protocol)
		}
		s += "]"
	}
	_, trigger := ep.Annotations[corev1.EndpointsLastChangeTriggerTime]
	return s + fmt.Sprintf(" trigger=%v", trigger)
}

// A Service selecting pods gets Endpoints with its labels, the controller's
// and the headless one, ready and not-ready addresses on the port its
// named targetPort resolves to; a pod becoming ready moves; the Endpoints
// go with the Service. A Service without selector gets none.
func TestEndpointsFollowServiceAndPods(t *testing.T) {
	c := start(t)
	ctx := t.Context()
	runPod(t, c, "web-0", "10.244.0.2", true)
	runPod(t, c, "web-1", "10.244.0.3", false)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, ClusterIP: corev1.ClusterIPNone,
			Ports: []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: intstr.FromString("http")}}}}
	if _, err := c.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plain := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := c.CoreV1().Services("default").Create(ctx, plain, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect := func(want string) {
		t.Helper()
		eventually(t, "Endpoints "+want, func() (bool, string) {
			ep, err := c.CoreV1().Endpoints("default").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			got := describe(ep)
			if trimmed, anyTrigger := strings.CutSuffix(want, " trigger=any"); anyTrigger {
				got, want = got[:strings.LastIndex(got, " trigger=")], trimmed
			}
			return got == want, got
		})
	}
	// The first Endpoints may lose the trigger time, as on kcm: a sync
	// whose cache does not yet hold the Endpoints it created fails to
	// create them again, and its retry, with the trigger already
	// recorded, writes the next change without one.
	expect("labels=map[endpoints.kubernetes.io/managed-by:endpoint-controller service.kubernetes.io/headless: team:a] [10.244.0.2 | 10.244.0.3 web:8080/TCP] trigger=any")
	runPod(t, c, "web-2", "10.244.0.4", true)
	expect("labels=map[endpoints.kubernetes.io/managed-by:endpoint-controller service.kubernetes.io/headless: team:a] [10.244.0.2 10.244.0.4 | 10.244.0.3 web:8080/TCP] trigger=true")
	if _, err := c.CoreV1().Endpoints("default").Get(ctx, "plain", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Endpoints of a Service without selector: err = %v, want NotFound", err)
	}
	if err := c.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Endpoints deleted with the Service", func() (bool, string) {
		_, err := c.CoreV1().Endpoints("default").Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

func addresses(n int, prefix string) []corev1.EndpointAddress {
	out := make([]corev1.EndpointAddress, n)
	for i := range out {
		out[i] = corev1.EndpointAddress{IP: fmt.Sprintf("%s.%d.%d", prefix, i/256, i%256)}
	}
	return out
}

// truncate keeps 1000 addresses, cutting not-ready ones first, each subset
// by its share.
func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		ready, notReady         [2]int
		wantReady, wantNotReady [2]int
		wantTruncated           bool
	}{
		{"within capacity", [2]int{500, 200}, [2]int{200, 100}, [2]int{500, 200}, [2]int{200, 100}, false},
		{"exactly at capacity", [2]int{400, 400}, [2]int{150, 50}, [2]int{400, 400}, [2]int{150, 50}, false},
		{"not ready cut", [2]int{400, 400}, [2]int{300, 100}, [2]int{400, 400}, [2]int{150, 50}, true},
		{"ready cut, not ready dropped", [2]int{900, 300}, [2]int{10, 10}, [2]int{750, 250}, [2]int{0, 0}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := &corev1.Endpoints{}
			for i := range 2 {
				ep.Subsets = append(ep.Subsets, corev1.EndpointSubset{Addresses: addresses(tc.ready[i], fmt.Sprintf("10.%d", i)),
					NotReadyAddresses: addresses(tc.notReady[i], fmt.Sprintf("11.%d", i))})
			}
			if got := truncate(ep); got != tc.wantTruncated {
				t.Errorf("truncate = %v, want %v", got, tc.wantTruncated)
			}
			for i, s := range ep.Subsets {
				if len(s.Addresses) != tc.wantReady[i] || len(s.NotReadyAddresses) != tc.wantNotReady[i] {
					t.Errorf("subset %d: %d ready, %d not ready; want %d, %d", i, len(s.Addresses), len(s.NotReadyAddresses), tc.wantReady[i], tc.wantNotReady[i])
				}
			}
		})
	}
}
