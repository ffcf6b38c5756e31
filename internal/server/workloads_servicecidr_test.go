package server

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const serviceCIDRFinalizer = "networking.k8s.io/service-cidr-finalizer"

// serviceCIDRState is the finalizers and Ready condition of the
// ServiceCIDR name, or the error reading it.
func serviceCIDRState(t *testing.T, c kubernetes.Interface, name string) (*networkingv1.ServiceCIDR, string) {
	sc, err := c.NetworkingV1().ServiceCIDRs().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return nil, err.Error()
	}
	ready := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	if ready == nil {
		return sc, fmt.Sprintf("%q no Ready", sc.Finalizers)
	}
	return sc, fmt.Sprintf("%q Ready=%s %q: %s", sc.Finalizers, ready.Status, ready.Reason, ready.Message)
}

// admitd serve runs kube-controller-manager's service-cidr-controller as
// its service account, which the bootstrap RBAC policy lets patch
// ServiceCIDRs and their status, through admission: the default
// ServiceCIDR and a new one get its finalizer and Ready condition (the
// default one's as kube-apiserver + kube-controller-manager 1.37.2 leave
// it, test/sidebyside-servicecidr.sh), and one deleted while it holds a
// Service's address stays, saying why. --controllers=-service-cidr-controller
// turns it off.
func TestServiceCIDRControllerKeepsTheDefault(t *testing.T) {
	ready := fmt.Sprintf("[%q] Ready=True \"\": Kubernetes Service CIDR is ready", serviceCIDRFinalizer)
	for _, on := range []bool{true, false} {
		flag := []string{"*"}
		if !on {
			flag = []string{"*", "-service-cidr-controller"}
		}
		c := startWithControllers(t, flag...)
		sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "extra"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/24"}}}
		if _, err := c.NetworkingV1().ServiceCIDRs().Create(t.Context(), sc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if !on {
			time.Sleep(time.Second) // what the controller would have had to patch them
			for _, name := range []string{"kubernetes", "extra"} {
				if sc, state := serviceCIDRState(t, c, name); sc == nil || len(sc.Finalizers) != 0 {
					t.Errorf("with the controller off, %s: %s", name, state)
				}
			}
			continue
		}
		states := map[string]*networkingv1.ServiceCIDR{}
		for _, name := range []string{"kubernetes", "extra"} {
			eventually(t, "ServiceCIDR "+name+" ready", func() (bool, string) {
				sc, state := serviceCIDRState(t, c, name)
				states[name] = sc
				return state == ready, state + ", want " + ready
			})
		}
		var managers []string
		for _, m := range states["kubernetes"].ManagedFields {
			managers = append(managers, m.Manager+"/"+string(m.Operation)+"/"+m.Subresource)
		}
		slices.Sort(managers)
		want := []string{"kube-apiserver/Update/", "kube-controller-manager/Update/", "kubernetes-service-cidr-controller/Apply/status", "service-cidr-controller/Apply/status"}
		if !slices.Equal(managers, want) {
			t.Errorf("the default ServiceCIDR's managers %q, want %q", managers, want)
		}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Port: 80}}}}
		if _, err := c.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.NetworkingV1().ServiceCIDRs().Delete(t.Context(), "extra", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		terminating := fmt.Sprintf("[%q] Ready=False \"Terminating\": There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR", serviceCIDRFinalizer)
		eventually(t, "extra held by web's address", func() (bool, string) {
			_, state := serviceCIDRState(t, c, "extra")
			return state == terminating, state + ", want " + terminating
		})
	}
}
