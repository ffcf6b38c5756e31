package apiserver

import (
	"strings"
	"testing"
)

// A PUT whose body names another uid is a 409 naming upstream's storage
// key, whatever its resourceVersion; a patch changing the uid is a 422; a
// delete precondition is worded as upstream's rest.BeforeDelete (verified
// against kube-apiserver 1.37.2).
func TestUIDPreconditionsAsUpstream(t *testing.T) {
	ts := newTestServer(t)
	if w := ts.do("POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"},"data":{"a":"1"}}`); w.Code != 201 {
		t.Fatalf("create = %d %s", w.Code, w.Body)
	}
	for _, c := range []struct {
		method, path, ct, body string
		code                   int
		want                   string
	}{
		{"PUT", cmPath + "/u", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u","uid":"other","resourceVersion":"1"},"data":{"a":"2"}}`,
			409, `StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/u, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: `},
		{"PATCH", cmPath + "/u", "application/merge-patch+json", `{"metadata":{"uid":"other"}}`,
			422, `metadata.uid: Invalid value: \"other\": field is immutable`},
		{"DELETE", cmPath + "/u", "application/json", `{"preconditions":{"uid":"other"}}`,
			409, `Operation cannot be fulfilled on ConfigMap \"u\": the UID in the precondition (other) does not match the UID in record (`},
	} {
		w := ts.do(c.method, c.path, c.ct, c.body)
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%s %s = %d %s, want %d with %s", c.method, c.body, w.Code, w.Body, c.code, c.want)
		}
	}
}

// The cases a review found (each as kube-apiserver 1.37.2's source has it):
// a create-on-update PUT naming a uid fails the precondition against the
// empty object; a scale patch is validated before its uid is checked; a
// body in another namespace is a 400 before the store; a dry run's storage
// names its key without /registry; an events.k8s.io Event's delete
// precondition names the core kind.
func TestUIDPreconditionsInTheirUpstreamOrder(t *testing.T) {
	ts := newTestServer(t)
	const deploy = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":1,"selector":{"matchLabels":{"a":"b"}},` +
		`"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`
	const event = `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e"},"eventTime":"2026-01-01T00:00:00.000000Z",` +
		`"reportingController":"x.io/c","reportingInstance":"i","action":"Do","reason":"Done","type":"Normal","regarding":{"kind":"Pod","name":"p","namespace":"default"}}`
	for path, body := range map[string]string{cmPath: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"}}`,
		"/apis/apps/v1/namespaces/default/deployments": deploy, "/apis/events.k8s.io/v1/namespaces/default/events": event} {
		if w := ts.do("POST", path, "application/json", body); w.Code != 201 {
			t.Fatalf("create %s = %d %s", path, w.Code, w.Body)
		}
	}
	const role = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/r"
	const scale = "/apis/apps/v1/namespaces/default/deployments/web/scale"
	for _, c := range []struct {
		method, path, ct, body string
		code                   int
		want                   string
	}{
		{"PUT", role, "application/json", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r","uid":"other"},"rules":[]}`,
			409, `Key: /registry/roles/default/r, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: "`},
		{"PUT", cmPath + "/missing", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"missing","uid":"other"}}`,
			404, `configmaps \"missing\" not found`},
		{"PATCH", scale, "application/merge-patch+json", `{"metadata":{"uid":"other"},"spec":{"replicas":-1}}`,
			422, `Scale.autoscaling \"web\" is invalid: spec.replicas`},
		{"PATCH", scale, "application/merge-patch+json", `{"metadata":{"uid":"other"},"spec":{"replicas":2}}`,
			409, `Operation cannot be fulfilled on deployments/scale.apps \"web\": Precondition failed: UID in precondition: other, UID in object meta: `},
		{"PUT", cmPath + "/u", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u","namespace":"elsewhere","uid":"other"}}`,
			400, `the namespace of the provided object does not match the namespace sent on the request`},
		{"PUT", cmPath + "/u?dryRun=All", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u","uid":"other"}}`,
			409, `Key: /configmaps/default/u, ResourceVersion: 0`},
		{"DELETE", "/apis/events.k8s.io/v1/namespaces/default/events/e", "application/json", `{"preconditions":{"uid":"other"}}`,
			409, `Operation cannot be fulfilled on Event \"e\": the UID in the precondition (other)`},
	} {
		w := ts.do(c.method, c.path, c.ct, c.body)
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%s %s %s = %d %s, want %d with %s", c.method, c.path, c.body, w.Code, w.Body, c.code, c.want)
		}
	}
	if w := ts.do("GET", scale, "", ""); !strings.Contains(w.Body.String(), `"replicas":1`) {
		t.Errorf("the refused scale patches changed the replicas: %s", w.Body)
	}
}
