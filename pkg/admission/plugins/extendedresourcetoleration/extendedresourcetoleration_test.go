package extendedresourcetoleration

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

func requests(names ...string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}}
	for _, n := range names {
		r.Requests[corev1.ResourceName(n)] = resource.MustParse("1")
	}
	return r
}

func tol(key string) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
}

func TestAdmit(t *testing.T) {
	sec := int64(5)
	other := corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule}
	withSeconds := tol("foo.com/bar")
	withSeconds.TolerationSeconds = &sec
	wildcard := corev1.Toleration{Operator: corev1.TolerationOpExists}
	for _, tc := range []struct {
		name       string
		containers []corev1.Container
		init       []corev1.Container
		have, want []corev1.Toleration
	}{
		{name: "no extended resources", containers: []corev1.Container{{Resources: requests("cpu", "memory")}}},
		{name: "init container without extended resources", init: []corev1.Container{{Resources: requests("cpu")}}},
		{name: "container", containers: []corev1.Container{{Resources: requests("cpu", "foo.com/bar")}}, want: []corev1.Toleration{tol("foo.com/bar")}},
		{name: "init container", init: []corev1.Container{{Resources: requests("foo.com/bar")}}, want: []corev1.Toleration{tol("foo.com/bar")}},
		{name: "appended after existing", containers: []corev1.Container{{Resources: requests("foo.com/bar")}},
			have: []corev1.Toleration{other}, want: []corev1.Toleration{other, tol("foo.com/bar")}},
		{name: "several, in name order", containers: []corev1.Container{{Resources: requests("foo.com/c", "foo.com/a")}, {Resources: requests("foo.com/b")}},
			init: []corev1.Container{{Resources: requests("foo.com/a")}},
			want: []corev1.Toleration{tol("foo.com/a"), tol("foo.com/b"), tol("foo.com/c")}},
		{name: "existing identical kept", containers: []corev1.Container{{Resources: requests("foo.com/bar")}},
			have: []corev1.Toleration{tol("foo.com/bar"), other}, want: []corev1.Toleration{tol("foo.com/bar"), other}},
		{name: "matching with tolerationSeconds replaced", containers: []corev1.Container{{Resources: requests("foo.com/bar")}},
			have: []corev1.Toleration{other, withSeconds}, want: []corev1.Toleration{other, tol("foo.com/bar")}},
		{name: "a wildcard does not count", containers: []corev1.Container{{Resources: requests("foo.com/bar")}},
			have: []corev1.Toleration{wildcard}, want: []corev1.Toleration{wildcard, tol("foo.com/bar")}},
		{name: "native and requests. names are not extended",
			containers: []corev1.Container{{Resources: requests("kubernetes.io/x", "example.kubernetes.io/y", "requests.foo/bar", "hugepages-2Mi", "foo.com/-bad")}}},
	} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: tc.containers, InitContainers: tc.init, Tolerations: tc.have}}
		a := admissiontest.Create(pod).Attributes()
		if err := (Plugin{}).Admit(context.Background(), a); err != nil {
			t.Fatalf("%s: Admit = %v", tc.name, err)
		}
		if !reflect.DeepEqual(pod.Spec.Tolerations, tc.want) {
			t.Errorf("%s: tolerations = %v, want %v", tc.name, pod.Spec.Tolerations, tc.want)
		}
	}
}

func TestIsExtendedResourceName(t *testing.T) {
	for name, want := range map[string]bool{
		"cpu": false, "nvidia.com/gpu": true, "kubernetes.io/foo": false, "foo.kubernetes.io/bar": false,
		"requests.foo.com/bar": false, "foo.com/" + string(make([]byte, 0)): false, "a/b": true, "foo.com/b@r": false,
	} {
		if got := IsExtendedResourceName(corev1.ResourceName(name)); got != want {
			t.Errorf("IsExtendedResourceName(%q) = %v, want %v", name, got, want)
		}
	}
}
