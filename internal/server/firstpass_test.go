package server

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/pkg/webhook"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// Start returns after the controllers' first writes: on a restart that
// turns the root CA publisher on, with a webhook holding every ConfigMap
// create for 200 ms, every namespace has its kube-root-ca.crt the moment
// Start returns. Without the wait Start returns while the webhook still
// holds the first of them.
func TestStartWaitsForTheControllersFirstWrites(t *testing.T) {
	var held atomic.Int32
	slow := webhook.HandlerFunc(func(context.Context, webhook.Request) webhook.Response {
		held.Add(1)
		time.Sleep(200 * time.Millisecond)
		return webhook.Allowed("")
	})
	hook := webhooktest.Start(t, webhook.Serve(slow))
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.KubeconfigOut = t.TempDir(), 0, "-"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.Controllers = []string{"*", "-" + controllers.RootCAControllerName}
	s, admin := startWith(t, o)
	c := kubernetes.NewForConfigOrDie(admin)
	registerSlowConfigMapWebhook(t, c, hook.ClientConfig("/"))
	namespaces, err := c.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps("default").Get(t.Context(), "kube-root-ca.crt", metav1.GetOptions{}); err == nil {
		t.Fatal("kube-root-ca.crt published with its controller off")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	o.Controllers = nil
	_, admin = startWith(t, o)
	c = kubernetes.NewForConfigOrDie(admin)
	for _, ns := range namespaces.Items {
		if _, err := c.CoreV1().ConfigMaps(ns.Name).Get(t.Context(), "kube-root-ca.crt", metav1.GetOptions{}); err != nil {
			t.Errorf("namespace %s right after Start: %v; want its kube-root-ca.crt", ns.Name, err)
		}
	}
	if n := held.Load(); n < int32(len(namespaces.Items)) {
		t.Errorf("the webhook saw %d ConfigMap creates, want at least %d (one per namespace)", n, len(namespaces.Items))
	}
}

// registerSlowConfigMapWebhook sends every ConfigMap create to cc.
func registerSlowConfigMapWebhook(t *testing.T, c kubernetes.Interface, cc admissionregistrationv1.WebhookClientConfig) {
	t.Helper()
	none := admissionregistrationv1.SideEffectClassNone
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "slow"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "slow.example.com", ClientConfig: cc,
			SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}}}
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(t.Context(), cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
