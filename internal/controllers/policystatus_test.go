package controllers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

const (
	policiesPath  = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
	maxKeysPolicy = `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",
 "metadata":{"name":"max-keys"},
 "spec":{"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},
  "matchConstraints":{"resourceRules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}],
   "objectSelector":{"matchLabels":{"checked":"yes"}}},
  "validations":[{"expression":"size(object.data) <= int(params.data.max)","messageExpression":"'at most ' + params.data.max + ' keys'"}]}}`
)

// body sends a request without a body and returns the response's.
func (c *cluster) body(code int, method, path string) string {
	c.t.Helper()
	got, out := c.do(method, path, "")
	if got != code {
		c.t.Fatalf("%s %s = %d %s, want %d", method, path, got, out, code)
	}
	return out
}

const gadgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","listKind":"GadgetList"},
  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
   "spec":{"type":"object","properties":{"size":{"type":"integer"}}}}}}}]}}`

// TestPolicyStatusTypeChecking checks status.typeChecking is written for a
// policy on a custom resource, and observedGeneration for every policy.
func TestPolicyStatusTypeChecking(t *testing.T) {
	c := newCluster(t)
	c.must(http.StatusCreated, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadgetCRD)
	c.must(http.StatusCreated, "POST", policiesPath, `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",
 "metadata":{"name":"gadgets"},
 "spec":{"matchConstraints":{"resourceRules":[{"operations":["CREATE"],"apiGroups":["example.com"],"apiVersions":["v1"],"resources":["gadgets"]}]},
  "validations":[{"expression":"object.spec.size == 'big'"},{"expression":"object.spec.size < 10"}]}}`)
	c.must(http.StatusCreated, "POST", policiesPath, maxKeysPolicy)
	if err := c.status.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	body := c.body(http.StatusOK, "GET", policiesPath+"/gadgets")
	for _, want := range []string{`"observedGeneration":1`, `"fieldRef":"spec.validations[0].expression"`,
		`example.com/v1, Kind=Gadget: ERROR: \u003cinput\u003e:1:18: found no matching overload for '_==_' applied to '(int, string)'`} {
		if !strings.Contains(body, want) {
			t.Errorf("status of gadgets = %s, want it to contain %s", body, want)
		}
	}
	if strings.Contains(body, "validations[1]") {
		t.Errorf("status of gadgets = %s, want no warning for validation 1", body)
	}
	if body := c.body(http.StatusOK, "GET", policiesPath+"/max-keys"); !strings.Contains(body, `"status":{"observedGeneration":1,"typeChecking":{}}`) {
		t.Errorf("status of max-keys = %s, want observedGeneration 1 and no warnings", body)
	}
}

// TestPolicyStatusTypeCheckingBuiltin checks built-in kinds are type
// checked against their OpenAPI schemas.
func TestPolicyStatusTypeCheckingBuiltin(t *testing.T) {
	c := newCluster(t)
	for name, expr := range map[string]string{"bad": "object.spec.replicas > 'x'", "good": "object.spec.replicas > 1"} {
		c.must(http.StatusCreated, "POST", policiesPath, `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",
 "metadata":{"name":"`+name+`"},
 "spec":{"matchConstraints":{"resourceRules":[{"operations":["CREATE"],"apiGroups":["apps"],"apiVersions":["v1"],"resources":["deployments"]}]},
  "validations":[{"expression":"`+expr+`"}]}}`)
	}
	if err := c.status.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	body := c.body(http.StatusOK, "GET", policiesPath+"/bad")
	want := `{"fieldRef":"spec.validations[0].expression","warning":"apps/v1, Kind=Deployment: ERROR: \u003cinput\u003e:1:22: found no matching overload for '_\u003e_' applied to '(int, string)'\n | object.spec.replicas \u003e 'x'\n | .....................^\n"}`
	if !strings.Contains(body, want) {
		t.Errorf("status of bad = %s, want it to contain %s", body, want)
	}
	body = c.body(http.StatusOK, "GET", policiesPath+"/good")
	if !strings.Contains(body, `"status":{"observedGeneration":1,"typeChecking":{}}`) {
		t.Errorf("status of good = %s, want observedGeneration 1 and no warnings", body)
	}
}
