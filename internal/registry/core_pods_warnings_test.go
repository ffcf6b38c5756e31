package registry

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The texts are upstream's (compared at length with upstream's functions
// in test/upstream/podwarnings); these cases pin the paths and update
// rules of each kind.
func TestWorkloadWarnings(t *testing.T) {
	spec := corev1.PodSpec{NodeSelector: map[string]string{"beta.kubernetes.io/os": "linux"},
		Containers: []corev1.Container{{Name: "app", Env: []corev1.EnvVar{{Name: "X", Value: "a"}, {Name: "X", Value: "$(X)b"}, {Name: "X", Value: "c"}}}}}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		"container.apparmor.security.beta.kubernetes.io/app": "runtime/default"}}, Spec: spec}
	m := func(name string, gen int64) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Generation: gen} }
	const (
		selector = `spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`
		env      = `spec.containers[0].env[2]: hides previous definition of "X", which may be dropped when using apply`
		apparmor = `metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: deprecated since v1.30; use the "appArmorProfile" field instead`
		name     = `metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]`
	)
	under := func(root string, texts ...string) []string {
		var out []string
		for _, s := range texts {
			if s == name {
				out = append(out, s)
				continue
			}
			out = append(out, root+s)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		warnings func(obj, old runtime.Object) []string
		obj, old runtime.Object
		want     []string
	}{
		{"pod create", podWarnings, &corev1.Pod{ObjectMeta: m("p", 1), Spec: spec}, nil, []string{selector, env}},
		{"pod update", podWarnings, &corev1.Pod{ObjectMeta: m("p", 2), Spec: spec}, &corev1.Pod{ObjectMeta: m("p", 1)}, nil},
		{"deployment create", deploymentWarnings, &appsv1.Deployment{ObjectMeta: m("a.b", 1), Spec: appsv1.DeploymentSpec{Template: tmpl}}, nil,
			under("spec.template.", name, selector, apparmor, env)},
		{"deployment update", deploymentWarnings, &appsv1.Deployment{ObjectMeta: m("a.b", 2), Spec: appsv1.DeploymentSpec{Template: tmpl}},
			&appsv1.Deployment{ObjectMeta: m("a.b", 1)}, under("spec.template.", selector, apparmor, env)},
		{"deployment update, same generation", deploymentWarnings, &appsv1.Deployment{ObjectMeta: m("a", 1), Spec: appsv1.DeploymentSpec{Template: tmpl}},
			&appsv1.Deployment{ObjectMeta: m("a", 1), Spec: appsv1.DeploymentSpec{Template: tmpl}}, nil},
		{"replication controller update warns of the old template", replicationControllerWarnings,
			&corev1.ReplicationController{ObjectMeta: m("rc", 2), Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{}}},
			&corev1.ReplicationController{ObjectMeta: m("rc", 1), Spec: corev1.ReplicationControllerSpec{Template: &tmpl}},
			under("spec.template.", selector, apparmor, env)},
		{"cron job create", cronJobWarnings, &batchv1.CronJob{ObjectMeta: m("cj", 1), Spec: batchv1.CronJobSpec{
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}}}, nil,
			under("spec.jobTemplate.spec.template.", selector, apparmor, env)},
		{"pod template changed", podTemplateWarnings, &corev1.PodTemplate{Template: tmpl}, &corev1.PodTemplate{},
			under("template.", selector, apparmor, env)},
		{"pod template unchanged", podTemplateWarnings, &corev1.PodTemplate{Template: tmpl}, &corev1.PodTemplate{Template: tmpl}, nil},
	} {
		if got := tc.warnings(tc.obj, tc.old); !slices.Equal(got, tc.want) {
			t.Errorf("%s: warnings\n %q\nwant\n %q", tc.name, got, tc.want)
		}
	}
}

func TestPodAppArmorWarnings(t *testing.T) {
	const warning = `metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: deprecated since v1.30; use the "appArmorProfile" field instead`
	runtimeDefault := &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	for _, tc := range []struct {
		name        string
		annotation  string
		pod, field  *corev1.AppArmorProfile
		windows     bool
		wantWarning bool
	}{
		{"annotation only", "runtime/default", nil, nil, false, true},
		{"same as the pod's profile", "runtime/default", runtimeDefault, nil, false, false},
		{"differs from the pod's profile", "unconfined", runtimeDefault, nil, false, true},
		{"padded local profile", "localhost/ p", nil, nil, false, true},
		{"unknown value", "x", runtimeDefault, nil, false, true},
		{"field set", "unconfined", nil, runtimeDefault, false, false},
		{"windows pod", "unconfined", nil, nil, true, false},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "app": tc.annotation}},
			Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{AppArmorProfile: tc.pod},
				Containers: []corev1.Container{{Name: "app", SecurityContext: &corev1.SecurityContext{AppArmorProfile: tc.field}}}}}
		if tc.windows {
			pod.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
		}
		var want []string
		if tc.wantWarning {
			want = []string{warning}
		}
		if got := podAppArmorWarnings(pod); !slices.Equal(got, want) {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, want)
		}
		syncAppArmorAnnotations(pod)
		if tc.annotation == "localhost/ p" && pod.Spec.Containers[0].SecurityContext.AppArmorProfile != nil {
			t.Errorf("%s: the invalid profile was copied into the container: %+v", tc.name, pod.Spec.Containers[0].SecurityContext.AppArmorProfile)
		}
	}
}
