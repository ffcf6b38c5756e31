package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestNamespaceWritesAreReadBackAtOnce: admission reads namespaces from a
// watch-fed cache; a namespace created (or deleted) through this server is
// seen by the very next request, as the write observer applies it before
// the write returns.
func TestNamespaceWritesAreReadBackAtOnce(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage = t.TempDir(), 0, "memory"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := Start(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	cfg, err := clientcmd.BuildConfigFromFlags("", s.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}
	for i := range 30 {
		name := fmt.Sprint("ryw-", i)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().ConfigMaps(name).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create in namespace %s right after creating it: %v", name, err)
		}
		if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		cm2 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}
		_, err := cs.CoreV1().ConfigMaps(name).Create(ctx, cm2, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) {
			t.Fatalf("create in namespace %s right after deleting it = %v, want Forbidden (terminating) or NotFound", name, err)
		}
	}
}
