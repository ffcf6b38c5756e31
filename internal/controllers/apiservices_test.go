package controllers

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

var apiserverTestUser = authenticationv1.UserInfo{Username: "system:apiserver", Groups: []string{"system:masters"}}

func (c *cluster) apiService(name string) (*apiregistrationv1.APIService, bool) {
	code, body := c.do("GET", "/apis/apiregistration.k8s.io/v1/apiservices/"+name, "")
	if code != http.StatusOK {
		return nil, false
	}
	var s apiregistrationv1.APIService
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		c.t.Fatal(err)
	}
	return &s, true
}

func (c *cluster) newAPIServiceRegistration() *APIServiceRegistration {
	c.t.Helper()
	r, err := NewAPIServiceRegistration(c.store, c.cat, roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		return c.api.Loopback(apiserverTestUser).RoundTrip(r)
	}), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		c.t.Fatal(err)
	}
	return r
}

const crdWidgets = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}},
{"name":"v1beta1","served":false,"storage":false,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`

// The built-in APIServices are created on start with upstream's priorities
// and the onstart label; a changed one is brought back on the next start
// only; an onstart one of a group no longer served is deleted then; one
// without the label is left alone. A definition's served versions get
// continuously kept APIServices that go with the definition.
func TestAPIServiceRegistration(t *testing.T) {
	c := newCluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c.must(http.StatusCreated, "POST", "/apis/apiregistration.k8s.io/v1/apiservices",
		`{"metadata":{"name":"v1.gone.example.com","labels":{"kube-aggregator.kubernetes.io/automanaged":"onstart"}},
		"spec":{"group":"gone.example.com","version":"v1","groupPriorityMinimum":100,"versionPriority":1}}`)
	c.must(http.StatusCreated, "POST", "/apis/apiregistration.k8s.io/v1/apiservices",
		`{"metadata":{"name":"v1.mine.example.com"},"spec":{"group":"mine.example.com","version":"v1","groupPriorityMinimum":100,"versionPriority":1}}`)
	c.must(http.StatusCreated, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crdWidgets)

	if err := c.newAPIServiceRegistration().SyncOnStart(ctx); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]apiregistrationv1.APIServiceSpec{
		"v1.":            {Version: "v1", GroupPriorityMinimum: 18000, VersionPriority: 1},
		"v2.autoscaling": {Group: "autoscaling", Version: "v2", GroupPriorityMinimum: 17500, VersionPriority: 30},
		"v1.example.com": {Group: "example.com", Version: "v1", GroupPriorityMinimum: 1000, VersionPriority: 100},
	} {
		s, ok := c.apiService(name)
		if !ok || !reflect.DeepEqual(s.Spec, want) || s.Labels[AutoRegisterManagedLabel] == "" || len(s.Status.Conditions) != 1 || s.Status.Conditions[0].Reason != "Local" {
			t.Errorf("APIService %s = %+v, want spec %+v, automanaged, Available (Local)", name, s, want)
		}
	}
	for name, want := range map[string]bool{"v1.gone.example.com": false, "v1.mine.example.com": true, "v1beta1.example.com": false,
		"v1.apiregistration.k8s.io": false, "v1.example.com": true} {
		if _, ok := c.apiService(name); ok != want {
			t.Errorf("APIService %s exists: %v, want %v", name, ok, want)
		}
	}
	if s, _ := c.apiService("v1.example.com"); s.Labels[AutoRegisterManagedLabel] != "true" {
		t.Errorf("custom resource APIService labels = %v, want automanaged true", s.Labels)
	}

	reg := c.newAPIServiceRegistration()
	go reg.Run(ctx)
	c.must(http.StatusOK, "PATCH", "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps", `{"spec":{"versionPriority":3}}`)
	c.must(http.StatusOK, "PATCH", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
		`{"spec":{"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}},
		{"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`)
	c.eventually("a newly served version gets its APIService", func() bool { _, ok := c.apiService("v1beta1.example.com"); return ok })
	c.must(http.StatusOK, "PATCH", "/apis/apiregistration.k8s.io/v1/apiservices/v1.example.com", `{"spec":{"groupPriorityMinimum":5}}`)
	c.eventually("a custom resource APIService's spec is restored", func() bool {
		s, _ := c.apiService("v1.example.com")
		return s != nil && s.Spec.GroupPriorityMinimum == 1000
	})
	if s, _ := c.apiService("v1.apps"); s.Spec.VersionPriority != 3 {
		t.Errorf("v1.apps versionPriority = %d after start, want the changed 3 kept until the next start", s.Spec.VersionPriority)
	}
	c.must(http.StatusOK, "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", "")
	c.eventually("the definition's APIServices go with it", func() bool {
		_, v1 := c.apiService("v1.example.com")
		_, beta := c.apiService("v1beta1.example.com")
		return !v1 && !beta
	})
	if err := c.newAPIServiceRegistration().SyncOnStart(ctx); err != nil {
		t.Fatal(err)
	}
	if s, _ := c.apiService("v1.apps"); s.Spec.VersionPriority != 15 {
		t.Errorf("v1.apps versionPriority = %d after a restart, want 15", s.Spec.VersionPriority)
	}
}
