package apiserver

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/admitd/admitd/pkg/admission"
)

func evictionJSON(apiVersion, name, extra string) string {
	return `{"apiVersion":"` + apiVersion + `","kind":"Eviction","metadata":{"name":"` + name + `"}` + extra + `}`
}

// runReady makes a pod Running and Ready, so that budgets guard it.
func (ts *testServer) runReady(name string) {
	ts.t.Helper()
	ts.must(200, "PATCH", podsPath+"/"+name+"/status", mediaMergePatch,
		`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
}

func TestEvictionDeletesPendingPods(t *testing.T) {
	seer := &attrSeer{}
	ts := newTestServer(t, admission.NamedPlugin{Name: "seer", Plugin: seer})
	ts.must(201, "POST", podsPath, "", podJSON("a", ""))
	ts.must(201, "POST", podsPath, "", podJSON("b", ""))
	seer.take()

	ts.must(201, "POST", podsPath+"/a/eviction", "", evictionJSON("policy/v1", "a", ""))
	if got, want := seer.take(), []string{"CREATE pods/eviction policy/v1.Eviction a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("admission saw %v, want %v (the pod's delete is not admitted)", got, want)
	}
	if w := ts.do("GET", podsPath+"/a", "", ""); w.Code != 404 {
		t.Errorf("evicted pod: GET = %d, want 404", w.Code)
	}

	ts.must(201, "POST", podsPath+"/b/eviction?dryRun=All", "", evictionJSON("policy/v1beta1", "b", ""))
	ts.must(200, "GET", podsPath+"/b", "", "")

	for _, tc := range []struct {
		name, path, body string
		code             int
		msg              string
	}{
		{"missing pod", "/ghost/eviction", evictionJSON("policy/v1", "ghost", ""), 404, `pods "ghost" not found`},
		{"name mismatch", "/b/eviction", evictionJSON("policy/v1", "c", ""), 400, "name in URL does not match name in Eviction object"},
		{"dry-run mismatch", "/b/eviction?dryRun=All", evictionJSON("policy/v1", "b", `,"deleteOptions":{"dryRun":["Other"]}`), 500,
			"Non-matching dry-run options in request and content: [All] and [Other]"},
		{"uid precondition", "/b/eviction", evictionJSON("policy/v1", "b", `,"deleteOptions":{"preconditions":{"uid":"x"}}`), 409,
			"the UID in the precondition (x) does not match the UID in record"},
	} {
		w := ts.do("POST", podsPath+tc.path, "", tc.body)
		code, msg := statusMessage(t, w.Body.Bytes())
		if w.Code != tc.code || int(code) != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: = %d %q, want %d %q", tc.name, w.Code, msg, tc.code, tc.msg)
		}
	}
}

func TestEvictionHonoursBudgets(t *testing.T) {
	ts := newTestServer(t)
	for _, p := range []string{"a", "b"} {
		ts.must(201, "POST", podsPath, "", podJSON(p, ""))
		ts.runReady(p)
	}
	ts.must(201, "POST", pdbPath, "", `{"metadata":{"name":"web"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}}}`)

	// No disruption controller has looked at the budget yet.
	w := ts.do("POST", podsPath+"/a/eviction", "", evictionJSON("policy/v1", "a", ""))
	st := statusOf(t, w)
	if st.Code != 429 || st.Message != "Cannot evict pod as it would violate the pod's disruption budget." ||
		st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Message != "The disruption budget web is still being processed by the server." {
		t.Fatalf("eviction under an unprocessed budget = %+v, want upstream's 429", st)
	}

	ts.must(200, "PATCH", pdbPath+"/web/status", mediaMergePatch,
		`{"status":{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2}}`)
	ts.must(201, "POST", podsPath+"/a/eviction", "", evictionJSON("policy/v1", "a", ""))
	var pdb policyv1.PodDisruptionBudget
	decodeInto(t, ts.do("GET", pdbPath+"/web", "", "").Body.Bytes(), &pdb)
	if pdb.Status.DisruptionsAllowed != 0 || len(pdb.Status.DisruptedPods) != 1 {
		t.Errorf("budget after an eviction: allowed %d, disrupted %v; want 0 and pod a", pdb.Status.DisruptionsAllowed, pdb.Status.DisruptedPods)
	}

	w = ts.do("POST", podsPath+"/b/eviction", "", evictionJSON("policy/v1", "b", ""))
	st = statusOf(t, w)
	if st.Code != 429 || st.Details == nil || len(st.Details.Causes) != 1 ||
		st.Details.Causes[0].Message != "The disruption budget web does not allow evicting pods currently" {
		t.Errorf("eviction with no disruption left = %+v", st)
	}

	ts.must(201, "POST", pdbPath, "", `{"metadata":{"name":"second"},"spec":{"maxUnavailable":1,"selector":{}}}`)
	w = ts.do("POST", podsPath+"/b/eviction", "", evictionJSON("policy/v1", "b", ""))
	if code, msg := statusMessage(t, w.Body.Bytes()); w.Code != 201 || code != 500 || !strings.Contains(msg, "more than one PodDisruptionBudget") {
		t.Errorf("two budgets = %d %d %q, want upstream's 201 carrying a 500 Status", w.Code, code, msg)
	}
	var pod corev1.Pod
	decodeInto(t, ts.do("GET", podsPath+"/b", "", "").Body.Bytes(), &pod)
	if pod.DeletionTimestamp != nil {
		t.Error("pod b was deleted despite its budgets")
	}
}
