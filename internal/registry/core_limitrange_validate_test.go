package registry

import (
	"testing"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LimitRange writes are checked as kube-apiserver 1.37.2 answers them
// (recorded from it).
func TestLimitRangeValidation(t *testing.T) {
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr4"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Max: resourceList("cpu", "1"), Min: resourceList("cpu", "2"), MaxLimitRequestRatio: resourceList("cpu", "500m")},
		{Type: corev1.LimitTypePod, Default: resourceList("cpu", "1")},
		{Type: corev1.LimitTypePod},
	}}}
	// defaulting fills the container's default and defaultRequest from max
	// and min, which the relations then catch
	want := `[spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1, ` +
		`spec.limits[0].defaultRequest[cpu]: Invalid value: "1": min value 2 is greater than default request value 1, ` +
		`spec.limits[0].default[cpu]: Invalid value: "2": min value 2 is greater than default value 1, ` +
		`spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1, ` +
		"spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod', " +
		`spec.limits[2].type: Duplicate value: "Pod"]`
	if got := aggregate(createErrors(t, lr)); got != want {
		t.Errorf("create:\n got %s\nwant %s", got, want)
	}
	pvc := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypePersistentVolumeClaim}}}}
	want = "spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided"
	if got := aggregate(createErrors(t, pvc)); got != want {
		t.Errorf("PVC without storage:\n got %s\nwant %s", got, want)
	}
	if _, err := uuid.Parse(pvc.Name); err != nil {
		t.Errorf("a nameless LimitRange is named %q, want a UUID as upstream's strategy gives it", pvc.Name)
	}
	hugepages := &corev1.LimitRange{ObjectMeta: meta1("lr5"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
		Default: resourceList("hugepages-2Mi", "4Mi"), DefaultRequest: resourceList("hugepages-2Mi", "2Mi")}}}}
	want = `spec.limits[0].defaultRequest[hugepages-2Mi]: Invalid value: "2Mi": default value 4Mi must equal to defaultRequest value 2Mi in hugepages-2Mi`
	if got := aggregate(updateErrors(t, hugepages, &corev1.LimitRange{ObjectMeta: meta1("lr5")})); got != want {
		t.Errorf("update, hugepages overcommitted:\n got %s\nwant %s", got, want)
	}
}
