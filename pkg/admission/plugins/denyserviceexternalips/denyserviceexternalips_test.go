package denyserviceexternalips

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

func svc(ips ...string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Spec: corev1.ServiceSpec{ExternalIPs: ips}}
}

func TestValidate(t *testing.T) {
	const denied = `services "s" is forbidden: Use of external IPs is denied by admission control`
	services := corev1.SchemeGroupVersion.WithResource("services")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}}
	admissiontest.Run(t, New(), []admissiontest.Case{
		{Name: "create without externalIPs", Attributes: admissiontest.Create(svc()).Attributes()},
		{Name: "create with externalIPs", Attributes: admissiontest.Create(svc("1.1.1.1")).Attributes(), WantErr: denied, WantCode: 403},
		{Name: "update: same", Attributes: admissiontest.Update(svc("1.1.1.1", "2.2.2.2"), svc("1.1.1.1", "2.2.2.2")).Attributes()},
		{Name: "update: reorder", Attributes: admissiontest.Update(svc("1.1.1.1", "2.2.2.2"), svc("2.2.2.2", "1.1.1.1")).Attributes()},
		{Name: "update: change", Attributes: admissiontest.Update(svc("1.1.1.1", "2.2.2.2"), svc("1.1.1.1", "3.3.3.3")).Attributes(), WantErr: denied},
		{Name: "update: add", Attributes: admissiontest.Update(svc("1.1.1.1", "2.2.2.2"), svc("1.1.1.1")).Attributes(), WantErr: denied},
		{Name: "update: erase", Attributes: admissiontest.Update(svc(), svc("1.1.1.1", "2.2.2.2")).Attributes()},
		{Name: "update: reduce from back", Attributes: admissiontest.Update(svc("1.1.1.1"), svc("1.1.1.1", "2.2.2.2")).Attributes()},
		{Name: "update: reduce from front", Attributes: admissiontest.Update(svc("2.2.2.2"), svc("1.1.1.1", "2.2.2.2")).Attributes()},
		{Name: "update: duplicate known IP", Attributes: admissiontest.Update(svc("1.1.1.1", "1.1.1.1"), svc("1.1.1.1")).Attributes()},
		{Name: "status subresource", Attributes: admissiontest.Update(svc("1.1.1.1"), svc()).Resource(services, "status").Attributes()},
		{Name: "delete", Attributes: admissiontest.Delete(svc("1.1.1.1")).Attributes()},
		{Name: "not a service", Attributes: admissiontest.Create(cm).Resource(services, "").Attributes(),
			WantErr: "Internal error occurred: Expected Service resource, got: /v1, Kind=ConfigMap", WantCode: 500},
		{Name: "old not a service", Attributes: admissiontest.Update(svc(), cm).Attributes(),
			WantErr: "Internal error occurred: Expected Service resource, got: /v1, Kind=Service", WantCode: 500},
	})
}
