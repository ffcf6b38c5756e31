package servicecidrs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers/controllertest"
	"github.com/admitd/admitd/pkg/admission"
)

// testGrace is the deletion grace period of the tests' controllers: long
// enough to see a deletion wait for it, short enough to wait it out.
const testGrace = 2 * time.Second

// start runs the controller on a server that allocates IPv4 cluster IPs,
// with its admission chain of plugins.
func start(t *testing.T, plugins ...admission.NamedPlugin) *controllertest.Server {
	t.Helper()
	s := controllertest.StartWithClusterIPs(t, corev1.IPv4Protocol, plugins...)
	client, recorder := s.Controller(User, Component)
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log, DeletionGracePeriod: testGrace})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return s
}

func createCIDR(t *testing.T, s *controllertest.Server, name string, cidrs ...string) {
	t.Helper()
	sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	if _, err := s.Admin.NetworkingV1().ServiceCIDRs().Create(s.Ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createService(t *testing.T, s *controllertest.Server, name, clusterIP string) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.ServiceSpec{ClusterIP: clusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}
	// the allocator's cache hears of a new ServiceCIDR through a watch
	controllertest.Eventually(t, 5*time.Second, "service "+name, func() (bool, string) {
		_, err := s.Admin.CoreV1().Services("default").Create(s.Ctx, svc, metav1.CreateOptions{})
		return err == nil, fmt.Sprint(err)
	})
	if _, err := s.Admin.NetworkingV1().IPAddresses().Get(s.Ctx, clusterIP, metav1.GetOptions{}); err != nil {
		t.Fatalf("the IPAddress of service %s: %v", name, err)
	}
}

// readyCondition describes sc's Ready condition and finalizers.
func readyCondition(sc *networkingv1.ServiceCIDR) string {
	c := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	if c == nil {
		return fmt.Sprintf("finalizers %q, no Ready", sc.Finalizers)
	}
	return fmt.Sprintf("finalizers %q, Ready=%s reason %q: %s", sc.Finalizers, c.Status, c.Reason, c.Message)
}

// waitFor waits until the ServiceCIDR name's finalizers and Ready
// condition are want (as readyCondition writes them), and returns it.
func waitFor(t *testing.T, s *controllertest.Server, name, want string) *networkingv1.ServiceCIDR {
	t.Helper()
	var sc *networkingv1.ServiceCIDR
	controllertest.Eventually(t, 10*time.Second, "ServiceCIDR "+name, func() (bool, string) {
		var err error
		if sc, err = s.Admin.NetworkingV1().ServiceCIDRs().Get(s.Ctx, name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		got := readyCondition(sc)
		return got == want, fmt.Sprintf("%s, want %s", got, want)
	})
	return sc
}

// waitGone waits until the ServiceCIDR name is deleted.
func waitGone(t *testing.T, s *controllertest.Server, name string) {
	t.Helper()
	controllertest.Eventually(t, testGrace+10*time.Second, "ServiceCIDR "+name+" deleted", func() (bool, string) {
		sc, err := s.Admin.NetworkingV1().ServiceCIDRs().Get(s.Ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, readyCondition(sc)
	})
}

func deleteCIDR(t *testing.T, s *controllertest.Server, name string) {
	t.Helper()
	if err := s.Admin.NetworkingV1().ServiceCIDRs().Delete(s.Ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

var (
	ready       = fmt.Sprintf("finalizers [%q], Ready=True reason \"\": %s", Finalizer, readyMessage)
	terminating = fmt.Sprintf("finalizers [%q], Ready=False reason \"Terminating\": %s", Finalizer, terminatingMessage)
)

// A new ServiceCIDR, the default "kubernetes" one as any other, gets the
// finalizer (a patch of kube-controller-manager's) and Ready=True without
// a reason, applied by service-cidr-controller to the status.
func TestNewServiceCIDRGetsFinalizerAndReady(t *testing.T) {
	s := start(t)
	for _, name := range []string{"kubernetes", "extra"} {
		createCIDR(t, s, name, map[string]string{"kubernetes": "10.0.0.0/24", "extra": "10.96.0.0/24"}[name])
		sc := waitFor(t, s, name, ready)
		var managers []string
		for _, m := range sc.ManagedFields {
			managers = append(managers, fmt.Sprintf("%s/%s/%s", m.Manager, m.Operation, m.Subresource))
		}
		for _, want := range []string{"service-cidr-controller/Apply/status", "kube-controller-manager/Update/"} {
			if !slices.Contains(managers, want) {
				t.Errorf("%s: managers %q, want %s among them", name, managers, want)
			}
		}
	}
}

// A ServiceCIDR that holds no IPAddress is deleted once the grace period
// has passed, not before.
func TestEmptyServiceCIDRDeletedAfterGrace(t *testing.T) {
	s := start(t)
	createCIDR(t, s, "empty", "10.96.0.0/24")
	waitFor(t, s, "empty", ready)
	deleteCIDR(t, s, "empty")
	deleted := time.Now()
	sc, err := s.Admin.NetworkingV1().ServiceCIDRs().Get(s.Ctx, "empty", metav1.GetOptions{})
	if err != nil || sc.DeletionTimestamp == nil {
		t.Fatalf("right after its deletion: %v, %+v; want it kept by its finalizer", err, sc)
	}
	waitGone(t, s, "empty")
	// the deletion timestamp has whole seconds: at most one less to wait
	if waited := time.Since(deleted); waited < testGrace-time.Second {
		t.Errorf("deleted after %v, before the grace period of %v", waited, testGrace)
	}
}

// A ServiceCIDR holding a Service's address that the primary range does
// not cover keeps its finalizer, and says why, until the Service goes.
func TestServiceCIDRWaitsForItsAddresses(t *testing.T) {
	s := start(t)
	createCIDR(t, s, "kubernetes", "10.0.0.0/24")
	createCIDR(t, s, "extra", "10.96.0.0/24")
	waitFor(t, s, "extra", ready)
	createService(t, s, "web", "10.96.0.10")
	deleteCIDR(t, s, "extra")
	waitFor(t, s, "extra", terminating)
	time.Sleep(testGrace + 500*time.Millisecond)
	waitFor(t, s, "extra", terminating)
	if err := s.Admin.CoreV1().Services("default").Delete(s.Ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, s, "extra")
	if sc := waitFor(t, s, "kubernetes", ready); sc.DeletionTimestamp != nil {
		t.Error("the primary ServiceCIDR is being deleted")
	}
}

// A ServiceCIDR whose range another contains may go at once, and so may
// one being held up when a ServiceCIDR covering it comes: the addresses
// stay in a range.
func TestCoveringServiceCIDRLetsDeletionFinish(t *testing.T) {
	s := start(t)
	createCIDR(t, s, "kubernetes", "10.0.0.0/24")
	createCIDR(t, s, "inner", "10.0.0.0/28")
	createCIDR(t, s, "extra", "10.96.0.0/24")
	createService(t, s, "web", "10.0.0.5")
	createService(t, s, "db", "10.96.0.10")
	waitFor(t, s, "inner", ready)
	waitFor(t, s, "extra", ready)
	deleteCIDR(t, s, "inner")
	waitGone(t, s, "inner")
	deleteCIDR(t, s, "extra")
	waitFor(t, s, "extra", terminating)
	createCIDR(t, s, "wide", "10.96.0.0/16")
	waitGone(t, s, "extra")
	for _, ip := range []string{"10.0.0.5", "10.96.0.10"} {
		if _, err := s.Admin.NetworkingV1().IPAddresses().Get(s.Ctx, ip, metav1.GetOptions{}); err != nil {
			t.Errorf("IPAddress %s: %v; want it kept", ip, err)
		}
	}
}

// A Ready condition the server refuses is retried, with the warning
// event KubernetesServiceCIDRError on the ServiceCIDR.
func TestRefusedReadyIsReported(t *testing.T) {
	deny := &denyStatus{}
	s := start(t, admission.NamedPlugin{Name: "DenyServiceCIDRStatus", Plugin: deny})
	createCIDR(t, s, "extra", "10.96.0.0/24")
	controllertest.Eventually(t, 10*time.Second, "the warning event", func() (bool, string) {
		events, err := s.Admin.CoreV1().Events("default").List(s.Ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "ServiceCIDR" && e.InvolvedObject.Name == "extra" {
				got := fmt.Sprintf("%s %s %s: %s", e.Source.Component, e.Type, e.Reason, e.Message)
				want := "service-cidr-controller Warning KubernetesServiceCIDRError: The ServiceCIDR Status can not be set to Ready=True"
				return got == want, fmt.Sprintf("%s, want %s", got, want)
			}
		}
		return false, "none"
	})
	waitFor(t, s, "extra", fmt.Sprintf("finalizers [%q], no Ready", Finalizer))
}

// denyStatus refuses every write of a ServiceCIDR's status.
type denyStatus struct{}

func (denyStatus) Handles(op admission.Operation) bool {
	return op == admission.Update || op == admission.Create
}

func (denyStatus) Validate(_ context.Context, a *admission.Attributes) error {
	if a.Resource.Resource == "servicecidrs" && a.Subresource == "status" {
		return admission.NewForbidden(a, errors.New("status writes are refused"))
	}
	return nil
}
