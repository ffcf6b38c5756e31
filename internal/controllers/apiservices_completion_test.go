package controllers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestAutoRegisterCompletion: the check names the built-in APIServices not
// yet seen Available (upstream's "missing APIService: [...]"), passes once
// every one has been, and keeps passing when one is deleted afterwards.
func TestAutoRegisterCompletion(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	check := NewAutoRegisterCompletion(c.store, c.cat).Check
	err := check(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "missing APIService: [") || !strings.Contains(err.Error(), " v1.apps ") {
		t.Fatalf("before registration: %v", err)
	}
	if err := c.newAPIServiceRegistration().SyncOnStart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := check(ctx); err != nil {
		t.Fatalf("after registration (Local ones are Available at creation): %v", err)
	}
	c.must(http.StatusOK, "DELETE", "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps", "")
	if err := check(ctx); err != nil {
		t.Errorf("a boot-sequence check failed again: %v", err)
	}
}
