package typename

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		obj  any
		want string
	}{
		{&corev1.Pod{}, "*core.Pod"},
		{&appsv1.Deployment{}, "*apps.Deployment"},
		{&certificatesv1beta1.ClusterTrustBundleList{}, "*certificates.ClusterTrustBundleList"},
		{corev1.Pod{}, "core.Pod"},
		{&unstructured.Unstructured{}, "*unstructured.Unstructured"},
		{nil, "<nil>"},
		{"s", "string"},
	} {
		if got := Of(tc.obj); got != tc.want {
			t.Errorf("Of(%T) = %q, want %q", tc.obj, got, tc.want)
		}
	}
}
