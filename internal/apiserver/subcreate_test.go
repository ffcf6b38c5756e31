package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
)

// attrSeer remembers, for every write, what admission saw:
// "OP resource/subresource Kind name".
type attrSeer struct {
	mu   sync.Mutex
	seen []string
}

func (a *attrSeer) Handles(admission.Operation) bool { return true }

func (a *attrSeer) Admit(_ context.Context, at *admission.Attributes) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := at.Resource.Resource
	if at.Subresource != "" {
		r += "/" + at.Subresource
	}
	a.seen = append(a.seen, fmt.Sprintf("%s %s %s %s", at.Operation, r, at.Kind.GroupVersion().String()+"."+at.Kind.Kind, at.Name))
	return nil
}

func (a *attrSeer) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.seen
	a.seen = nil
	return out
}

const (
	podsPath = "/api/v1/namespaces/default/pods"
	saPath   = "/api/v1/namespaces/default/serviceaccounts"
	pdbPath  = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
)

func podJSON(name string, extra string) string {
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","labels":{"app":"web"}},` +
		`"spec":{` + extra + `"containers":[{"name":"c","image":"nginx"}]}}`
}

func statusMessage(t *testing.T, body []byte) (int32, string) {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("decoding Status %s: %v", body, err)
	}
	return st.Code, st.Message
}

func TestPodBinding(t *testing.T) {
	seer := &attrSeer{}
	ts := newTestServer(t, admission.NamedPlugin{Name: "seer", Plugin: seer})
	ts.must(201, "POST", podsPath, "", podJSON("web", ""))
	ts.must(201, "POST", podsPath, "", podJSON("legacy", ""))
	ts.must(201, "POST", podsPath, "", podJSON("gated", `"schedulingGates":[{"name":"wait"}],`))
	seer.take()

	binding := func(name, node string) string {
		return `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"` + name + `","annotations":{"a":"b"}},"target":{"name":"` + node + `"}}`
	}
	w := ts.do("POST", podsPath+"/web/binding", "", binding("web", "node-1"))
	if code, _ := statusMessage(t, w.Body.Bytes()); w.Code != 201 || code != 201 || !strings.Contains(w.Body.String(), `"status":"Success"`) {
		t.Fatalf("binding = %d %s, want 201 and a Success Status", w.Code, w.Body)
	}
	if got, want := seer.take(), []string{"CREATE pods/binding v1.Binding web"}; !reflect.DeepEqual(got, want) {
		t.Errorf("admission saw %v, want %v", got, want)
	}
	var pod corev1.Pod
	decodeInto(t, ts.do("GET", podsPath+"/web", "", "").Body.Bytes(), &pod)
	if pod.Spec.NodeName != "node-1" || pod.Annotations["a"] != "b" || len(pod.Status.Conditions) != 1 ||
		pod.Status.Conditions[0].Type != corev1.PodScheduled || pod.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("bound pod: node %q annotations %v conditions %v", pod.Spec.NodeName, pod.Annotations, pod.Status.Conditions)
	}

	ts.must(201, "POST", "/api/v1/namespaces/default/bindings", "", binding("legacy", "node-2"))
	if got, want := seer.take(), []string{"CREATE bindings v1.Binding legacy"}; !reflect.DeepEqual(got, want) {
		t.Errorf("admission of the bindings resource saw %v, want %v", got, want)
	}

	for _, tc := range []struct {
		name, path, body string
		code             int
		msg              string
	}{
		{"already bound", "/web/binding", binding("web", "node-2"), 409, `Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1"`},
		{"gated", "/gated/binding", binding("gated", "node-1"), 409, `Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates`},
		{"name mismatch", "/web/binding", binding("other", "node-1"), 400, "name in URL does not match name in Binding object"},
		{"no target", "/gated/binding", binding("gated", ""), 500, "target.name: Required value"},
		{"missing pod", "/ghost/binding", binding("ghost", "n"), 404, `pods "ghost" not found`},
		{"uid precondition", "/gated/binding", `{"metadata":{"name":"gated","uid":"nope"},"target":{"name":"n"}}`, 409, "Precondition failed: UID in precondition: nope"},
	} {
		w := ts.do("POST", podsPath+tc.path, "", tc.body)
		code, msg := statusMessage(t, w.Body.Bytes())
		if w.Code != tc.code || int(code) != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: POST %s = %d %q, want %d %q", tc.name, tc.path, w.Code, msg, tc.code, tc.msg)
		}
	}
}

func decodeInto(t *testing.T, data []byte, into any) {
	t.Helper()
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
}

func TestServiceAccountToken(t *testing.T) {
	seer := &attrSeer{}
	ts := newTestServer(t, admission.NamedPlugin{Name: "seer", Plugin: seer})
	sa := ts.must(201, "POST", saPath, "", `{"metadata":{"name":"builder"}}`)
	ts.must(201, "POST", podsPath, "", podJSON("runner", `"serviceAccountName":"builder","nodeName":"node-9",`))
	ts.must(201, "POST", podsPath, "", podJSON("other", ""))
	seer.take()

	w := ts.do("POST", saPath+"/builder/token", "", `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`)
	if w.Code != 201 {
		t.Fatalf("token request = %d %s, want 201", w.Code, w.Body)
	}
	if got, want := seer.take(), []string{"CREATE serviceaccounts/token authentication.k8s.io/v1.TokenRequest builder"}; !reflect.DeepEqual(got, want) {
		t.Errorf("admission saw %v, want %v", got, want)
	}
	var tr authenticationv1.TokenRequest
	decodeInto(t, w.Body.Bytes(), &tr)
	if tr.Kind != "TokenRequest" || tr.Name != "builder" || tr.Namespace != "default" || *tr.Spec.ExpirationSeconds != 3600 ||
		!reflect.DeepEqual(tr.Spec.Audiences, []string{"https://kubernetes.default.svc.cluster.local"}) {
		t.Errorf("token request answer = %+v", tr)
	}
	if d := time.Until(tr.Status.ExpirationTimestamp.Time); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("expirationTimestamp is %v away, want about an hour", d)
	}
	claims, err := ts.s.tokens.Verify(tr.Status.Token)
	if err != nil {
		t.Fatalf("verifying the token: %v", err)
	}
	k8s := claims["kubernetes.io"].(map[string]any)
	if claims["sub"] != "system:serviceaccount:default:builder" || k8s["namespace"] != "default" ||
		k8s["serviceaccount"].(map[string]any)["uid"] != string(sa.UID) {
		t.Errorf("claims = %v", claims)
	}

	bound := `{"spec":{"audiences":["vault"],"expirationSeconds":3607,"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"runner"}}}`
	decodeInto(t, ts.must201Body(saPath+"/builder/token", bound), &tr)
	claims, _ = ts.s.tokens.Verify(tr.Status.Token)
	k8s = claims["kubernetes.io"].(map[string]any)
	if k8s["pod"].(map[string]any)["name"] != "runner" || k8s["node"].(map[string]any)["name"] != "node-9" || k8s["warnafter"] != nil {
		t.Errorf("pod-bound claims = %v (no warnafter for a non-kube audience)", claims)
	}
	kubelet := strings.Replace(bound, `"audiences":["vault"],`, "", 1)
	for _, extend := range []bool{true, false} {
		ts.s.tokens.NoExtendedExpiration = !extend
		decodeInto(t, ts.must201Body(saPath+"/builder/token", kubelet), &tr)
		claims, _ = ts.s.tokens.Verify(tr.Status.Token)
		k8s = claims["kubernetes.io"].(map[string]any)
		if extended := k8s["warnafter"] != nil && claims["exp"].(float64)-claims["iat"].(float64) == 365*24*3600; extended != extend {
			t.Errorf("kubelet's token with extension %v: claims %v", extend, claims)
		}
	}
	ts.s.tokens.NoExtendedExpiration = false

	for _, tc := range []struct {
		name, path, body string
		code             int
		msg              string
	}{
		{"too short", "/builder/token", `{"spec":{"expirationSeconds":60}}`, 422,
			`TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`},
		{"too long", "/builder/token", `{"spec":{"expirationSeconds":4294967297}}`, 422,
			`spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds`},
		{"no account", "/nobody/token", `{}`, 404, `serviceaccounts "nobody" not found`},
		{"name mismatch", "/builder/token", `{"metadata":{"name":"x"}}`, 422, "metadata.name: Invalid value: \"x\": must match the service account name if specified"},
		{"other pod's account", "/builder/token", `{"spec":{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"other"}}}`, 400,
			`cannot bind token for serviceaccount "builder" to pod running with different serviceaccount name.`},
		{"unsupported kind", "/builder/token", `{"spec":{"boundObjectRef":{"kind":"ConfigMap","apiVersion":"v1","name":"x"}}}`, 400,
			"cannot bind token to object of type /v1, Kind=ConfigMap"},
		{"stale uid", "/builder/token", `{"spec":{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"runner","uid":"old"}}}`, 409,
			"the UID in the bound object reference (old) does not match the UID in record"},
	} {
		w := ts.do("POST", saPath+tc.path, "", tc.body)
		code, msg := statusMessage(t, w.Body.Bytes())
		if w.Code != tc.code || int(code) != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: POST %s = %d %q, want %d %q", tc.name, tc.path, w.Code, msg, tc.code, tc.msg)
		}
	}
}

func (ts *testServer) must201Body(path, body string) []byte {
	ts.t.Helper()
	w := ts.do("POST", path, "", body)
	if w.Code != 201 {
		ts.t.Fatalf("POST %s = %d %s, want 201", path, w.Code, w.Body)
	}
	return w.Body.Bytes()
}
