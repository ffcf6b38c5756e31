package server

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// admitd serve runs the resource claim controller as its service
// account, which the bootstrap RBAC policy lets create the claim and
// apply the pod's status, through admission;
// --controllers=-resourceclaim-controller turns it off.
func TestResourceClaimControllerCreatesClaims(t *testing.T) {
	for _, on := range []bool{true, false} {
		flag := []string{"*"}
		if !on {
			flag = []string{"*", "-resource-claim-controller"} // by its alias
		}
		c := startWithControllers(t, flag...)
		readyNamespace(t, c, "dra", nil)
		class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"}}
		if _, err := c.ResourceV1().DeviceClasses().Create(t.Context(), class, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "dra"},
			Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
				Requests: []resourcev1.DeviceRequest{{Name: "req", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class.Name}}}}}}}
		if _, err := c.ResourceV1().ResourceClaimTemplates("dra").Create(t.Context(), tmpl, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "dra"}, Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Name: "c", Image: "i"}},
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu")}}}}
		if _, err := c.CoreV1().Pods("dra").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if !on {
			time.Sleep(time.Second) // what the controller would have had to create it
			claims, err := c.ResourceV1().ResourceClaims("dra").List(t.Context(), metav1.ListOptions{})
			if err != nil || len(claims.Items) != 0 {
				t.Fatalf("with the controller off: claims %v, %v", claims, err)
			}
			if body := scrapeClient(t, c); strings.Contains(body, "dynamic_resource_allocation_resourceclaim_creates_total") {
				t.Error("the controller's counter is served while it is off")
			}
			continue
		}
		eventually(t, "p's claim recorded", func() (bool, string) {
			p, err := c.CoreV1().Pods("dra").Get(t.Context(), "p", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			st := p.Status.ResourceClaimStatuses
			if len(st) != 1 || st[0].ResourceClaimName == nil {
				return false, "no claim recorded"
			}
			claim, err := c.ResourceV1().ResourceClaims("dra").Get(t.Context(), *st[0].ResourceClaimName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return claim.GenerateName == "p-gpu-" && claim.ManagedFields[0].Manager == "kube-controller-manager", "generated for p, by kube-controller-manager"
		})
		want := `dynamic_resource_allocation_resourceclaim_creates_total{admin_access="false",owner_api_group="",owner_api_kind="Pod",status="success"} 1`
		eventually(t, "the create counted", func() (bool, string) {
			return strings.Contains(scrapeClient(t, c), want), "no " + want
		})
	}
}
