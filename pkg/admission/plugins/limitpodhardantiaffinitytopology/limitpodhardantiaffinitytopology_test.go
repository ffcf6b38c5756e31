package limitpodhardantiaffinitytopology

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

func term(key string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"security": "S1"}}, TopologyKey: key}
}

func podWith(name string, aff *corev1.Affinity) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: corev1.PodSpec{Affinity: aff}}
}

func required(terms ...corev1.PodAffinityTerm) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}}
}

// TestValidate follows upstream's TestInterPodAffinityAdmission.
func TestValidate(t *testing.T) {
	const zone = "failure-domain.beta.kubernetes.io/zone"
	preferred := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 5, PodAffinityTerm: term(zone)}}}}
	affinity := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term(zone)}}}
	generated := podWith("", required(term(zone)))
	generated.GenerateName = "gen-"
	refusal := func(name, key string) string {
		return `pods "` + name + `" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ` + key + ` but only key kubernetes.io/hostname is allowed`
	}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	admissiontest.Run(t, Plugin{}, []admissiontest.Case{
		{Name: "no affinity", Attributes: admissiontest.Create(podWith("p", nil)).Attributes()},
		{Name: "hostname", Attributes: admissiontest.Create(podWith("p", required(term(corev1.LabelHostname)))).Attributes()},
		{Name: "zone", Attributes: admissiontest.Create(podWith("p", required(term(zone)))).Attributes(), WantErr: refusal("p", zone), WantCode: 403},
		{Name: "hostname then empty key", Attributes: admissiontest.Create(podWith("p", required(term(corev1.LabelHostname), term("")))).Attributes(), WantErr: refusal("p", ""), WantCode: 403},
		{Name: "on update", Attributes: admissiontest.Update(podWith("p", required(term(zone))), podWith("p", nil)).Attributes(), WantErr: refusal("p", zone), WantCode: 403},
		{Name: "preferred is not limited", Attributes: admissiontest.Create(podWith("p", preferred)).Attributes()},
		{Name: "affinity is not limited", Attributes: admissiontest.Create(podWith("p", affinity)).Attributes()},
		{Name: "generated name: the pod's empty name", Attributes: admissiontest.Create(generated).Attributes(),
			WantErr: `pods is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ` + zone + ` but only key kubernetes.io/hostname is allowed`, WantCode: 403},
		{Name: "subresource", Attributes: admissiontest.Update(podWith("p", required(term(zone))), podWith("p", nil)).Resource(pods, "status").Attributes()},
		{Name: "other resource", Attributes: admissiontest.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}}).Attributes()},
		{Name: "not a pod", Attributes: admissiontest.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}}).Resource(pods, "").Attributes(),
			WantErr: "Resource was marked with kind Pod but was unable to be converted", WantCode: 400},
		{Name: "delete is not handled", Attributes: admissiontest.Delete(podWith("p", required(term(zone)))).Attributes()},
	})
}
