package podgroupprotection

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

func group(finalizers ...string) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g", Finalizers: finalizers}}
}

func alpha(finalizers ...string) *schedulingv1alpha3.PodGroup {
	return &schedulingv1alpha3.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g", Finalizers: finalizers}}
}

func create(obj runtime.Object, version, sub string) *admission.Attributes {
	return admissiontest.Create(obj).Resource(schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: version, Resource: "podgroups"}, sub).
		Kind(schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: version, Kind: "PodGroup"}).Attributes()
}

func TestAdmit(t *testing.T) {
	admissiontest.Run(t, New(true), []admissiontest.Case{
		{Name: "adds the finalizer", Attributes: create(group(), "v1beta1", ""), WantObject: group(Finalizer)},
		{Name: "v1alpha3", Attributes: create(alpha("a"), "v1alpha3", ""), WantObject: alpha("a", Finalizer)},
		{Name: "already there", Attributes: create(group("a", Finalizer), "v1beta1", ""), WantObject: group("a", Finalizer)},
		{Name: "status subresource", Attributes: create(group(), "v1beta1", "status"), WantObject: group()},
		{Name: "update not handled", Attributes: admissiontest.Update(group(), group()).Resource(schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1beta1", Resource: "podgroups"}, "").Attributes(),
			WantObject: group()},
		{Name: "other resource", Attributes: admissiontest.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}).Attributes(),
			WantObject: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}},
	})
	admissiontest.Run(t, New(false), []admissiontest.Case{
		{Name: "gate off", Attributes: create(group(), "v1beta1", ""), WantObject: group()},
	})
}
