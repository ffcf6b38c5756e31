package server

import (
	"context"
	"io"
	"log/slog"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func startPrivileged(t *testing.T, allow bool) kubernetes.Interface {
	t.Helper()
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.AllowPrivileged = allow
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: s.URL, QPS: -1, TLSClientConfig: rest.TLSClientConfig{
		CAData: s.CAPEM, CertData: s.AdminCertPEM, KeyData: s.AdminKeyPEM}})
}

func privilegedPodSpec() corev1.PodSpec {
	yes := true
	return corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Image: "x", Ports: []corev1.ContainerPort{{ContainerPort: 0}}},
		{Name: "b", Image: "x", SecurityContext: &corev1.SecurityContext{Privileged: &yes}},
	}}
}

// TestAllowPrivileged: without --allow-privileged a privileged container is
// refused in a pod and in a pod template, in its place among the object's
// other errors, as kube-apiserver does; with it only the other errors stay.
func TestAllowPrivileged(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: privilegedPodSpec()}
	lbl := map[string]string{"app": "x"}
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: lbl},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbl}, Spec: privilegedPodSpec()}}}
	deploy.Spec.Template.Spec.Containers[0].Ports = nil

	refused := startPrivileged(t, false)
	_, err := refused.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{})
	want := `Pod "p" is invalid: [spec.containers[0].ports[0].containerPort: Required value, spec.containers[1].securityContext.privileged: Forbidden: disallowed by cluster policy]`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Fatalf("privileged pod: %v\nwant %s", err, want)
	}
	_, err = refused.AppsV1().Deployments("default").Create(t.Context(), deploy, metav1.CreateOptions{})
	want = `Deployment.apps "d" is invalid: spec.template.spec.containers[1].securityContext.privileged: Forbidden: disallowed by cluster policy`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Fatalf("privileged template: %v\nwant %s", err, want)
	}

	allowed := startPrivileged(t, true)
	_, err = allowed.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{})
	want = `Pod "p" is invalid: spec.containers[0].ports[0].containerPort: Required value`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Fatalf("privileged pod, allowed: %v\nwant %s", err, want)
	}
	if _, err = allowed.AppsV1().Deployments("default").Create(t.Context(), deploy, metav1.CreateOptions{}); err != nil {
		t.Fatalf("privileged template, allowed: %v", err)
	}
}
