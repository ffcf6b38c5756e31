package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// TestNodeRestriction: with NodeRestriction enabled, a kubelet (impersonated
// as system:node:n1) may create its mirror pod, owned by its Node as read
// from storage, but not label itself with a restricted label nor delete a
// pod of another node. Authorization is the default, Node,RBAC: the Node
// authorizer lets the kubelet make these requests, admission refuses some.
func TestNodeRestriction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmitd(t, t.TempDir(), "--enable-admission-plugins=NodeRestriction")
	admin := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	kcfg := rest.CopyConfig(a.RestConfig(t))
	kcfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}
	kubelet := kubernetes.NewForConfigOrDie(kcfg)

	n1, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "n2", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	if _, err := admin.CoreV1().Pods("default").Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	mirror := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "static-n1", Namespace: "default",
		Annotations:     map[string]string{corev1.MirrorPodAnnotationKey: "x"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n1", UID: n1.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	if _, err := kubelet.CoreV1().Pods("default").Create(ctx, mirror, metav1.CreateOptions{}); err != nil {
		t.Errorf("kubelet creating its mirror pod: %v", err)
	}

	// The node lifecycle controller takes off the not-ready taint
	// TaintNodesByCondition gave n1 (it has no conditions): wait for that,
	// so that the kubelet's update below changes only its labels.
	for deadline := time.Now().Add(10 * time.Second); len(n1.Spec.Taints) > 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if n1, err = admin.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(n1.Spec.Taints) > 0 {
		t.Fatalf("n1 still has taints %v after 10s", n1.Spec.Taints)
	}
	n1.Labels = map[string]string{"node-restriction.kubernetes.io/role": "db"}
	_, err = kubelet.CoreV1().Nodes().Update(ctx, n1, metav1.UpdateOptions{})
	wantForbidden(t, "labelling itself", err, `nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/role`)

	err = kubelet.CoreV1().Pods("default").Delete(ctx, "other", metav1.DeleteOptions{})
	wantForbidden(t, "deleting another node's pod", err, `pods "other" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`)
}

func wantForbidden(t *testing.T, what string, err error, msg string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: error = %v, want Forbidden %q", what, err, msg)
	}
}
