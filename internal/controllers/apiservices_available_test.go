package controllers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// TestAPIServiceAvailability: a remote APIService gets the condition the
// check gives, through the status subresource; a change of its Service
// checks it again; the transition time moves only when the status does;
// Local APIServices are not checked.
func TestAPIServiceAvailability(t *testing.T) {
	c := newCluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var verdict atomic.Pointer[apiregistrationv1.APIServiceCondition]
	verdict.Store(&apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: "False", Reason: "ServiceNotFound", Message: "gone"})
	var checkedLocal atomic.Bool
	check := func(_ context.Context, s *apiregistrationv1.APIService) apiregistrationv1.APIServiceCondition {
		if s.Spec.Service == nil {
			checkedLocal.Store(true)
		}
		return *verdict.Load()
	}
	ctl, err := NewAPIServiceAvailability(c.store, c.cat, roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		return c.api.Loopback(apiserverTestUser).RoundTrip(r)
	}), check, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	go ctl.Run(ctx)
	c.must(http.StatusCreated, "POST", "/apis/apiregistration.k8s.io/v1/apiservices",
		`{"metadata":{"name":"v1.wardle.example.com"},"spec":{"group":"wardle.example.com","version":"v1","groupPriorityMinimum":1000,"versionPriority":15,
		"service":{"namespace":"wardle","name":"api"},"insecureSkipTLSVerify":true}}`)
	c.must(http.StatusCreated, "POST", "/apis/apiregistration.k8s.io/v1/apiservices",
		`{"metadata":{"name":"v1.local.example.com"},"spec":{"group":"local.example.com","version":"v1","groupPriorityMinimum":1000,"versionPriority":15}}`)
	condition := func() *apiregistrationv1.APIServiceCondition {
		s, ok := c.apiService("v1.wardle.example.com")
		if !ok || len(s.Status.Conditions) != 1 {
			return nil
		}
		return &s.Status.Conditions[0]
	}
	c.eventually("the check's condition is written", func() bool { got := condition(); return got != nil && got.Reason == "ServiceNotFound" })
	first := condition().LastTransitionTime

	verdict.Store(&apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: "False", Reason: "MissingEndpoints", Message: "no endpoints"})
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"wardle"}}`)
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces/wardle/services", `{"metadata":{"name":"api"},"spec":{"ports":[{"port":443}]}}`)
	c.eventually("a change of the Service checks again", func() bool { got := condition(); return got != nil && got.Reason == "MissingEndpoints" })
	if got := condition(); !got.LastTransitionTime.Equal(&first) || got.Message != "no endpoints" {
		t.Errorf("condition = %+v, want the message changed and the transition time %v kept", got, first)
	}
	verdict.Store(&apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: "True", Reason: "Passed", Message: "all checks passed"})
	c.must(http.StatusOK, "PATCH", "/apis/apiregistration.k8s.io/v1/apiservices/v1.wardle.example.com", `{"metadata":{"labels":{"touch":"1"}}}`)
	c.eventually("the APIService becomes Available", func() bool { got := condition(); return got != nil && got.Status == "True" })
	if checkedLocal.Load() {
		t.Error("a Local APIService was checked")
	}
}
