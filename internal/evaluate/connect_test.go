package evaluate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

func execOptions() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PodExecOptions",
		"command": []any{"ls", "-l"}, "stdout": true, "container": "c1"}}
}

func TestRunConnectDeniedByAWebhook(t *testing.T) {
	var mu sync.Mutex
	var got map[string]any
	hook := webhooktest.Start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review map[string]any
		_ = json.NewDecoder(r.Body).Decode(&review)
		req := review["request"].(map[string]any)
		mu.Lock()
		got = req
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"response": map[string]any{"uid": req["uid"], "allowed": false, "status": map[string]any{"message": "no exec"}}})
	}))
	cfg := hook.ClientConfig("/exec")
	config := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: exec}
webhooks:
- name: exec.example.com
  clientConfig: {url: "` + *cfg.URL + `", caBundle: "` + b64(cfg.CABundle) + `"}
  rules: [{operations: [CONNECT], apiGroups: [""], apiVersions: [v1], resources: [pods/exec]}]
  sideEffects: None
  admissionReviewVersions: [v1]`
	r, err := Run(context.Background(), Input{Objects: objects(t, config),
		Request: Request{Operation: "connect", Object: execOptions(), Name: "pod1", Namespace: "ns1"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Allowed || r.Decision != "Denied" || r.Status == nil || r.Status.Code != 400 {
		t.Fatalf("Run(CONNECT) = %s %+v, want Denied with 400", r.Decision, r.Status)
	}
	if want := `admission webhook "exec.example.com" denied the request: no exec`; r.Status.Message != want {
		t.Errorf("message = %q, want %q", r.Status.Message, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if got["operation"] != "CONNECT" || got["name"] != "pod1" || got["namespace"] != "ns1" || got["subResource"] != "exec" {
		t.Errorf("the webhook got %v %v/%v %v, want CONNECT ns1/pod1 exec", got["operation"], got["namespace"], got["name"], got["subResource"])
	}
	want := map[string]any{"apiVersion": "v1", "kind": "PodExecOptions", "command": []any{"ls", "-l"}, "stdout": true, "container": "c1"}
	if !reflect.DeepEqual(got["object"], want) {
		t.Errorf("the webhook got the object %v, want %v", got["object"], want)
	}
}

func TestRunConnectAdmittedReportsTheAnswerAfterAdmission(t *testing.T) {
	pod := `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {containers: [{name: c1, image: nginx}]}`
	for _, tc := range []struct {
		name, target, message string
		objects               []Object
	}{
		{"no pod", "web", `pods "web" not found`, nil},
		{"an unscheduled pod", "web", "pod web does not have a host assigned", objects(t, pod)},
	} {
		r, err := Run(context.Background(), Input{Objects: tc.objects, Request: Request{Operation: Connect, Object: execOptions(), Name: tc.target}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !r.Allowed || r.Decision != "Allowed" || r.Status != nil {
			t.Errorf("%s: Run(CONNECT) = %v %s %+v, want admitted", tc.name, r.Allowed, r.Decision, r.Status)
		}
		if r.Connection == nil || r.Connection.Message != tc.message {
			t.Errorf("%s: connection = %+v, want the message %q", tc.name, r.Connection, tc.message)
		}
		if r.Trace == nil || r.Trace.Request.Operation != "CONNECT" {
			t.Errorf("%s: trace = %+v, want the CONNECT's", tc.name, r.Trace)
		}
		var out bytes.Buffer
		if err := Write(&out, r, "tree"); err != nil || !strings.Contains(out.String(), "connection: admitted, not opened by eval; the server then answered") {
			t.Errorf("%s: tree output (%v) lacks the connection:\n%s", tc.name, err, out.String())
		}
	}
}

func TestCheckConnect(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    Request
		want string // part of the error; "" none
		res  string // resource/subresource settled
	}{
		{"exec options", Request{Object: execOptions(), Name: "p"}, "", "pods/exec"},
		{"node proxy", Request{Object: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "NodeProxyOptions", "path": "/x"}}, Name: "n"}, "", "nodes/proxy"},
		{"no name", Request{Object: execOptions()}, "needs the name", ""},
		{"unknown kind", Request{Object: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x/v1", "kind": "Other"}}, Name: "p"}, "needs the resource", ""},
		{"not a connect subresource", Request{Object: execOptions(), Name: "p", Subresource: "status"}, "not \"status\"", ""},
		{"dry run", Request{Object: execOptions(), Name: "p", DryRun: true}, "no dry run", ""},
	} {
		q := tc.q
		q.Operation = Connect
		err := checkRequest(&q)
		var ce *ConfigError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: checkRequest = %v, want nil", tc.name, err)
		case tc.want != "" && (!errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: checkRequest = %v, want a ConfigError with %q", tc.name, err, tc.want)
		case tc.res != "" && q.Resource.Resource+"/"+q.Subresource != tc.res:
			t.Errorf("%s: settled %s/%s, want %s", tc.name, q.Resource.Resource, q.Subresource, tc.res)
		}
	}
}

func TestConnectQuery(t *testing.T) {
	got, err := connectQuery(map[string]any{"apiVersion": "v1", "kind": "PodPortForwardOptions", "ports": []any{int64(80), float64(8080)},
		"stdin": false, "path": "/a b", "none": nil})
	if err != nil {
		t.Fatal(err)
	}
	if want := "path=%2Fa+b&ports=80&ports=8080&stdin=false"; got.Encode() != want {
		t.Errorf("connectQuery = %s, want %s", got.Encode(), want)
	}
	if _, err := connectQuery(map[string]any{"nested": map[string]any{"a": "b"}}); err == nil {
		t.Error("connectQuery(a nested object) = nil error, want one")
	}
}
