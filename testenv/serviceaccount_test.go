package testenv_test

import (
	"context"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/webhook"
	"github.com/admitd/admitd/testenv"
)

// TestControllersWriteThroughWebhooks: creating a namespace calls the
// webhooks that match it, and then, as on kube-apiserver with
// kube-controller-manager, for the default ServiceAccount and the
// kube-root-ca.crt ConfigMap the controllers add to it, each as the
// controller's service account. Only calls about the new namespace count:
// the server's own startup writes elsewhere (the kubernetes Service's
// Endpoints and EndpointSlice in default) may still be on their way when
// the test registers its webhook.
func TestControllersWriteThroughWebhooks(t *testing.T) {
	env := testenv.Start(t)
	var mu sync.Mutex
	seen := map[string]string{}
	hook := env.ServeWebhook(t, webhook.Serve(webhook.HandlerFunc(func(_ context.Context, r webhook.Request) webhook.Response {
		if r.Namespace == "fresh" || r.Resource.Resource == "namespaces" {
			mu.Lock()
			seen[r.Resource.Resource+" "+r.Name] = r.UserInfo.Username
			mu.Unlock()
		}
		return webhook.Allowed("")
	})))
	env.RegisterValidating(t, "all.example.com", hook, testenv.Rule("*", admissionregistrationv1.Create))
	ctx := context.Background()
	cs := env.Client()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fresh"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"serviceaccounts default":     "system:serviceaccount:kube-system:service-account-controller",
		"configmaps kube-root-ca.crt": "system:serviceaccount:kube-system:root-ca-cert-publisher",
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		done := seen["serviceaccounts default"] != "" && seen["configmaps kube-root-ca.crt"] != ""
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook calls = %v, want the controllers' creates too", seen)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["namespaces fresh"] == "" {
		t.Errorf("webhook calls = %v, want the namespace create", seen)
	}
	for call, user := range want {
		if seen[call] != user {
			t.Errorf("webhook call %s by %q, want %q", call, seen[call], user)
		}
	}
}
