package testenv

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/pkg/webhook"
)

// Shutdown stops the server as kube-apiserver stops on SIGTERM: /readyz
// fails at once while everything is still served for the shutdown delay;
// then a write in flight (held by a slow webhook) still finishes, a watch
// ends cleanly (its response completes), and nothing new is accepted.
func TestGracefulShutdown(t *testing.T) {
	env := Start(t, func(s *settings) { s.server.Serving.ShutdownDelayDuration = 800 * time.Millisecond })
	ctx := context.Background()
	slow := env.ServeWebhook(t, webhook.Serve(webhook.HandlerFunc(func(context.Context, webhook.Request) webhook.Response {
		time.Sleep(1500 * time.Millisecond)
		return webhook.Allowed("")
	})))
	env.RegisterValidating(t, "slow.example.com", slow, Rule("configmaps", admissionregistrationv1.Create))
	client, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (*http.Response, error) { return client.Get(env.URL + path) }

	watch, err := get("/api/v1/namespaces/default/configmaps?watch=1")
	if err != nil || watch.StatusCode != http.StatusOK {
		t.Fatalf("watch: %v %v", watch, err)
	}
	defer watch.Body.Close()
	created := make(chan error, 1)
	go func() {
		_, err := env.Client().CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "in-flight"}}, metav1.CreateOptions{})
		created <- err
	}()
	time.Sleep(300 * time.Millisecond) // the create is in the webhook
	shutdown := make(chan error, 1)
	go func() { shutdown <- env.srv.Shutdown() }()
	time.Sleep(200 * time.Millisecond)

	resp, err := get("/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "[-]shutdown failed: reason withheld\nreadyz check failed") {
		t.Errorf("/readyz while shutting down = %d %q, want upstream's 500 naming the shutdown check", resp.StatusCode, body)
	}
	if resp, err := get("/api/v1/namespaces/default"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET a namespace during the shutdown delay = %v, %v; want 200", resp, err)
	} else {
		resp.Body.Close()
	}
	if err := <-created; err != nil {
		t.Errorf("the create in flight when shutdown began: %v, want it admitted and stored", err)
	}
	events, err := io.ReadAll(bufio.NewReader(watch.Body))
	if err != nil {
		t.Errorf("the watch ended with %v after %q, want a complete response", err, events)
	}
	if err := <-shutdown; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if resp, err := get("/api"); err == nil {
		resp.Body.Close()
		t.Errorf("GET /api after shutdown = %d, want no connection", resp.StatusCode)
	}
}
