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

// TestDefaultServiceAccountBypassesWebhooks: creating a namespace calls the
// webhooks that match the namespace, and not for the default
// ServiceAccount the server adds to it. Only calls about the new namespace
// count: the server's own startup writes elsewhere (the kubernetes
// Service's Endpoints and EndpointSlice in default) may still be on their
// way when the test registers its webhook.
func TestDefaultServiceAccountBypassesWebhooks(t *testing.T) {
	env := testenv.Start(t)
	var mu sync.Mutex
	var seen []string
	hook := env.ServeWebhook(t, webhook.Serve(webhook.HandlerFunc(func(_ context.Context, r webhook.Request) webhook.Response {
		if r.Namespace == "fresh" || r.Resource.Resource == "namespaces" {
			mu.Lock()
			seen = append(seen, r.Resource.Resource)
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := cs.CoreV1().ServiceAccounts("fresh").Get(ctx, "default", metav1.GetOptions{}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the default ServiceAccount was never created")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "namespaces" {
		t.Fatalf("webhook calls = %v, want only the namespace create", seen)
	}
}
