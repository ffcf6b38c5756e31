package webhooks_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"reflect"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/admitd/admitd/pkg/admission"
)

// replyWith answers 200 with the JSON body f builds.
func replyWith(f func(in *reviewIn) any) behaviour {
	return func(w http.ResponseWriter, _ *http.Request, in *reviewIn) { writeJSON(w, http.StatusOK, f(in)) }
}

// v1Reply is a well-formed v1 review around response fields.
func v1Reply(fields map[string]any) behaviour {
	return replyWith(func(in *reviewIn) any {
		r := map[string]any{"uid": in.Request.UID}
		for k, v := range fields {
			r[k] = v
		}
		return map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": r}
	})
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

const addLabelPatch = `[{"op":"add","path":"/metadata/labels/added","value":"test"}]`

// v1hook is a webhook with v1 reviews.
func v1hook(name, path string, opts ...func(*hook)) hook {
	return wh(name, path, append([]func(*hook){versions("v1")}, opts...)...)
}

func cmDelete() *admission.Attributes {
	a := cmUpdate(nil)
	a.Operation, a.Object = admission.Delete, nil
	a.OldObject = configMap("my-cm", "webhook-test", map[string]string{"cm.name": "my-cm"})
	a.Options = &metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "DeleteOptions"}}
	return a
}

// verificationCases are upstream's TestVerifyAdmissionResponse cases
// (k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview_test.go) and what
// VerifyAdmissionResponse (admissionreview.go) does with answers it does
// not list, through real HTTP answers.
var verificationCases = []dispatchCase{
	{name: "98 v1beta1 without uid or kind", hooks: []hook{wh("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": rawReply(200, "application/json", `{"response":{"allowed":true}}`)},
		want:  map[kind]outcome{validating: {}, mutating: {annotations: mut(0, "v.example.com", false)}}},
	{name: "110 v1beta1 wrong uid accepted", hooks: []hook{wh("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": rawReply(200, "application/json", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","response":{"uid":"nope","allowed":true}}`)},
		want:  map[kind]outcome{validating: {}, mutating: {annotations: mut(0, "v.example.com", false)}}},
	{name: "101 v1beta1 patch without patchType", hooks: []hook{wh("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": rawReply(200, "application/json", `{"response":{"allowed":true,"patch":"`+b64(addLabelPatch)+`"}}`)},
		want: map[kind]outcome{mutating: {labels: map[string]string{"cm.name": "my-cm", "added": "test"},
			annotations: merge(mut(0, "v.example.com", true), patchAnn(0, "v.example.com", addLabelPatch))}}},
	{name: "110 v1beta1 patchType Foo is a JSON patch", hooks: []hook{wh("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": rawReply(200, "application/json", `{"response":{"allowed":true,"patchType":"Foo","patch":"`+b64(addLabelPatch)+`"}}`)},
		want: map[kind]outcome{mutating: {labels: map[string]string{"cm.name": "my-cm", "added": "test"},
			annotations: merge(mut(0, "v.example.com", true), patchAnn(0, "v.example.com", addLabelPatch))}}},
	{name: "110 v1beta1 validating patch ignored", hooks: []hook{wh("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": rawReply(200, "application/json", `{"response":{"allowed":true,"patchType":"JSONPatch","patch":"`+b64(addLabelPatch)+`"}}`)},
		want:  map[kind]outcome{validating: {}}},
	{name: "121 v1 without apiVersion and kind", hooks: []hook{v1hook("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": replyWith(func(in *reviewIn) any {
			return map[string]any{"response": map[string]any{"uid": in.Request.UID, "allowed": true}}
		})},
		want: map[kind]outcome{
			validating: {err: internal(`failed calling webhook "v.example.com": received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind=`)},
			mutating: {err: internal(`failed calling webhook "v.example.com": received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind=`),
				annotations: mut(0, "v.example.com", false)}}},
	{name: "125 HTTP 201", hooks: []hook{v1hook("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": func(w http.ResponseWriter, _ *http.Request, in *reviewIn) {
			writeJSON(w, http.StatusCreated, map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
				"response": map[string]any{"uid": in.Request.UID, "allowed": true}})
		}},
		want: map[kind]outcome{validating: {}, mutating: {annotations: mut(0, "v.example.com", false)}}},
	{name: "107 v1 patch without patchType", hooks: []hook{v1hook("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": v1Reply(map[string]any{"allowed": true, "patch": b64(addLabelPatch)})},
		want: map[kind]outcome{
			validating: {err: internal(`failed calling webhook "v.example.com": received invalid webhook response: validating webhook may not return response.patch`)},
			mutating: {err: internal(`failed calling webhook "v.example.com": received invalid webhook response: webhook returned response.patch but not response.patchType`),
				annotations: mut(0, "v.example.com", false)}}},
	{name: "107 v1 patchType without patch", hooks: []hook{v1hook("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": v1Reply(map[string]any{"allowed": true, "patchType": "JSONPatch"})},
		want: map[kind]outcome{
			validating: {err: internal(`failed calling webhook "v.example.com": received invalid webhook response: validating webhook may not return response.patchType`)},
			mutating: {err: internal(`failed calling webhook "v.example.com": received invalid webhook response: webhook returned response.patchType but not response.patch`),
				annotations: mut(0, "v.example.com", false)}}},
	{name: "107 v1 empty patchType", hooks: []hook{v1hook("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": v1Reply(map[string]any{"allowed": true, "patchType": "", "patch": b64(addLabelPatch)})},
		want: map[kind]outcome{mutating: {err: internal(`failed calling webhook "v.example.com": received invalid webhook response: webhook returned invalid response.patchType of ""`),
			annotations: mut(0, "v.example.com", false)}}},
	{name: "108 v1 patchType Foo", hooks: []hook{v1hook("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": v1Reply(map[string]any{"allowed": true, "patchType": "Foo", "patch": b64(addLabelPatch)})},
		want: map[kind]outcome{mutating: {err: internal(`failed calling webhook "v.example.com": unsupported patch type "Foo"`),
			annotations: mut(0, "v.example.com", false)}}},
	{name: "108 v1 patchType Foo, Ignore", hooks: []hook{v1hook("v.example.com", "/p", policy(ignore))},
		serve: map[string]behaviour{"/p": v1Reply(map[string]any{"allowed": true, "patchType": "Foo", "patch": b64(addLabelPatch)})},
		want: map[kind]outcome{mutating: {labels: map[string]string{"cm.name": "my-cm"},
			annotations: mut(0, "v.example.com", false, "failed-open.mutation.webhook.admission.k8s.io/round_0_index_0", "v.example.com")}}},
	{name: "103 denial status 401 passes through", hooks: []hook{v1hook("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": v1Reply(map[string]any{"allowed": false, "status": map[string]any{"status": "Failure", "message": "Foo", "code": 401}})},
		want: map[kind]outcome{
			validating: {err: denied(401, `admission webhook "v.example.com" denied the request: Foo`)},
			mutating:   {err: denied(401, `admission webhook "v.example.com" denied the request: Foo`), annotations: mut(0, "v.example.com", false)}}},
	{name: "missing allowed means denied", hooks: []hook{v1hook("v.example.com", "/p")},
		serve: map[string]behaviour{"/p": v1Reply(map[string]any{})},
		want: map[kind]outcome{
			validating: {err: denied(400, `admission webhook "v.example.com" denied the request without explanation`)},
			mutating:   {err: denied(400, `admission webhook "v.example.com" denied the request without explanation`), annotations: mut(0, "v.example.com", false)}}},
}

func TestResponseVerification(t *testing.T) { runDispatchCases(t, verificationCases) }

// patchCases are how upstream applies a mutating webhook's patch
// (callAttrMutatingHook, k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go).
var patchCases = []dispatchCase{
	{name: "129 remove of a missing key ignores Ignore", hooks: []hook{v1hook("a.example.com", "/p", policy(ignore))},
		serve: map[string]behaviour{"/p": jsonPatch(`[{"op":"remove","path":"/metadata/labels/doesnotexist"}]`, nil)},
		want: map[kind]outcome{mutating: {err: internal(`error in remove for path: '/metadata/labels/doesnotexist': Unable to remove nonexistent key: doesnotexist: missing value`),
			annotations: mut(0, "a.example.com", false)}}},
	{name: "add under a missing parent", hooks: []hook{v1hook("a.example.com", "/p")},
		serve: map[string]behaviour{"/p": jsonPatch(`[{"op":"add","path":"/spec/x/y","value":1}]`, nil)},
		want: map[kind]outcome{mutating: {err: internal(`add operation does not apply: doc is missing path: "/spec/x/y": missing value`),
			annotations: mut(0, "a.example.com", false)}}},
	{name: "130 patch on DELETE", attrs: cmDelete, hooks: []hook{v1hook("a.example.com", "/p", policy(ignore))},
		serve: map[string]behaviour{"/p": jsonPatch(addLabelPatch, nil)},
		want: map[kind]outcome{mutating: {err: internal(`admission webhook "a.example.com" attempted to modify the object, which is not supported for this operation`),
			annotations: mut(0, "a.example.com", false)}}},
	{name: "131 patch to an unregistered kind", hooks: []hook{v1hook("a.example.com", "/p", policy(ignore))},
		serve: map[string]behaviour{"/p": jsonPatch(`[{"op":"replace","path":"/kind","value":"NotAKind"}]`, nil)},
		want: map[kind]outcome{mutating: {err: internal(`no kind "NotAKind" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`),
			annotations: mut(0, "a.example.com", false)}}},
	{name: "132 unknown field dropped, not a mutation", hooks: []hook{v1hook("a.example.com", "/p")},
		serve: map[string]behaviour{"/p": jsonPatch(`[{"op":"add","path":"/unknownField","value":"x"}]`, nil)},
		want: map[kind]outcome{mutating: {labels: map[string]string{"cm.name": "my-cm"},
			annotations: merge(mut(0, "a.example.com", false), patchAnn(0, "a.example.com", `[{"op":"add","path":"/unknownField","value":"x"}]`))}}},
	{name: "same value is not a mutation", hooks: []hook{v1hook("a.example.com", "/p")},
		serve: map[string]behaviour{"/p": jsonPatch(`[{"op":"replace","path":"/metadata/labels/cm.name","value":"my-cm"}]`, nil)},
		want: map[kind]outcome{mutating: {labels: map[string]string{"cm.name": "my-cm"},
			annotations: merge(mut(0, "a.example.com", false), patchAnn(0, "a.example.com", `[{"op":"replace","path":"/metadata/labels/cm.name","value":"my-cm"}]`))}}},
	{name: "133 empty patch", hooks: []hook{v1hook("a.example.com", "/p")},
		serve: map[string]behaviour{"/p": jsonPatch(`[]`, nil)},
		want:  map[kind]outcome{mutating: {labels: map[string]string{"cm.name": "my-cm"}, annotations: mut(0, "a.example.com", false)}}},
	{name: "134 index counts skipped webhooks", hooks: []hook{
		v1hook("skipped.example.com", "/shouldNotBeCalled", objSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"no": "such"}})),
		v1hook("a.example.com", "/p")},
		serve: map[string]behaviour{"/p": jsonPatch(addLabelPatch, nil)},
		want: map[kind]outcome{mutating: {labels: map[string]string{"cm.name": "my-cm", "added": "test"},
			annotations: merge(mut(1, "a.example.com", true), patchAnn(1, "a.example.com", addLabelPatch))}}},
	{name: "135 a later denial discards earlier patches", hooks: []hook{v1hook("a.example.com", "/p"), v1hook("d.example.com", "/d")},
		serve: map[string]behaviour{"/p": jsonPatch(addLabelPatch, nil), "/d": deny(&metav1.Status{Message: "no", Code: 403})},
		want: map[kind]outcome{mutating: {err: denied(403, `admission webhook "d.example.com" denied the request: no`),
			annotations: merge(mut(0, "a.example.com", true), patchAnn(0, "a.example.com", addLabelPatch), mut(1, "d.example.com", false))}}},
}

// TestDenialLeavesRequestObjectUnpatched is the rest of case 135:
// upstream patches a versioned copy and converts it back into the request
// object only once every webhook has passed, so a later denial leaves the
// request object as it was. Not visible to an API client (the request
// fails either way), only to callers of the plugin that look at the object
// after an error.
func TestDenialLeavesRequestObjectUnpatched(t *testing.T) {
	s := newWebhookServer(t, true)
	s.handle("/p", jsonPatch(addLabelPatch, nil))
	s.handle("/d", deny(&metav1.Status{Message: "no", Code: 403}))
	p := newPlugins(t, s.addr())
	p.configure(mutating, s, v1hook("a.example.com", "/p"), v1hook("d.example.com", "/d"))
	a := cmUpdate(nil)
	orig := a.Object
	wantStatus(t, p.mutating.Admit(context.Background(), a), 403, "", `admission webhook "d.example.com" denied the request: no`)
	if got := labelsOf(t, a.Object); !reflect.DeepEqual(got, map[string]string{"cm.name": "my-cm"}) {
		t.Errorf("after the denial the request object has labels %v (object replaced: %t), want the unpatched {cm.name: my-cm}", got, a.Object != orig)
	}
}

func TestPatches(t *testing.T) { runDispatchCases(t, patchCases) }

// TestPatchReDefaults: after a patch the object is defaulted again in the
// webhook's version (the GetObjectDefaulter call in callAttrMutatingHook,
// k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go), and `mutated` is decided
// before that: removing a defaulted field and having it come back is still
// a mutation.
func TestPatchReDefaults(t *testing.T) {
	s := newWebhookServer(t, true)
	s.handle("/p", jsonPatch(`[{"op":"remove","path":"/spec/size"}]`, nil))
	p := newPlugins(t, s.addr())
	p.configure(mutating, s, v1hook("a.example.com", "/p"))
	a := widgetUpdate(nil)
	if err := p.mutating.Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	size, _, _ := unstructured.NestedInt64(a.Object.(*unstructured.Unstructured).Object, "spec", "size")
	if size != 1 {
		t.Errorf("spec.size = %d, want 1 (re-defaulted)", size)
	}
	if k, v := mutationAnnotation(0, 0, "a.example.com", true); annotations(a)[k] != v {
		t.Errorf("%s = %q, want %q", k, annotations(a)[k], v)
	}
}

// TestEquivalentConversion: a webhook matching widgets v1beta1 under
// matchPolicy Equivalent receives the object converted to v1beta1, its
// patch is applied in v1beta1, and the request object comes back as v1.
func TestEquivalentConversion(t *testing.T) {
	s := newWebhookServer(t, true)
	s.handle("/p", jsonPatch(addLabelPatch, nil))
	p := newPlugins(t, s.addr())
	equivalent := admissionregistrationv1.Equivalent
	p.configure(mutating, s, v1hook("a.example.com", "/p", func(h *hook) {
		h.matchPolicy = &equivalent
		h.rules = []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1beta1"}, Resources: []string{"widgets"}},
		}}
	}))
	a := widgetUpdate(nil)
	if err := p.mutating.Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	calls := s.callsTo("/p")
	if len(calls) != 1 {
		t.Fatalf("calls = %d, want 1", len(calls))
	}
	req := calls[0].Review.Request
	if req.Kind.Version != "v1beta1" || req.Resource.Version != "v1beta1" || req.RequestKind.Version != "v1" || req.RequestResource.Version != "v1" {
		t.Errorf("kind %v resource %v requestKind %v requestResource %v, want v1beta1 invocation of a v1 request", req.Kind, req.Resource, req.RequestKind, req.RequestResource)
	}
	if got := string(req.Object.Raw); !strings.Contains(got, `"apiVersion":"example.com/v1beta1"`) {
		t.Errorf("object = %s, want apiVersion example.com/v1beta1", got)
	}
	u := a.Object.(*unstructured.Unstructured)
	if u.GetAPIVersion() != "example.com/v1" || u.GetLabels()["added"] != "test" {
		t.Errorf("object = %s %v, want example.com/v1 with label added=test", u.GetAPIVersion(), u.GetLabels())
	}
}

// TestDenialStatus is upstream's ToStatusErr and its tests
// (k8s.io/apiserver/pkg/admission/plugin/webhook/errors/statuserror.go, statuserror_test.go):
// what a denying webhook's status becomes for the client, identical for
// both plugins.
func TestDenialStatus(t *testing.T) {
	causes := &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "FieldValueInvalid", Message: "bad", Field: "data"}}}
	tests := []struct {
		name   string
		status *metav1.Status
		want   metav1.Status
	}{
		{"113 absent", nil, metav1.Status{Status: "Failure", Code: 400,
			Message: `admission webhook "deny.example.com" denied the request without explanation`}},
		{"114 message", &metav1.Status{Message: "you shall not pass"}, metav1.Status{Status: "Failure", Code: 400,
			Message: `admission webhook "deny.example.com" denied the request: you shall not pass`}},
		{"115 reason only", &metav1.Status{Reason: metav1.StatusReasonForbidden}, metav1.Status{Status: "Failure", Code: 400, Reason: "Forbidden",
			Message: `admission webhook "deny.example.com" denied the request: Forbidden`}},
		{"116 message wins over reason", &metav1.Status{Message: "nope", Reason: metav1.StatusReasonForbidden}, metav1.Status{Status: "Failure", Code: 400, Reason: "Forbidden",
			Message: `admission webhook "deny.example.com" denied the request: nope`}},
		{"117 code 401 kept", &metav1.Status{Code: 401}, metav1.Status{Status: "Failure", Code: 401,
			Message: `admission webhook "deny.example.com" denied the request without explanation`}},
		{"117 code 500 kept", &metav1.Status{Code: 500}, metav1.Status{Status: "Failure", Code: 500,
			Message: `admission webhook "deny.example.com" denied the request without explanation`}},
		{"118 code 200 becomes 400", &metav1.Status{Code: 200}, metav1.Status{Status: "Failure", Code: 400,
			Message: `admission webhook "deny.example.com" denied the request without explanation`}},
		{"118 code 399 becomes 400", &metav1.Status{Code: 399}, metav1.Status{Status: "Failure", Code: 400,
			Message: `admission webhook "deny.example.com" denied the request without explanation`}},
		{"119 Success becomes Failure, details kept", &metav1.Status{Code: 422, Message: "m", Status: "Success", Details: causes},
			metav1.Status{Status: "Failure", Code: 422, Details: causes, Message: `admission webhook "deny.example.com" denied the request: m`}},
		{"119 custom status kept", &metav1.Status{Status: "custom", Code: 403}, metav1.Status{Status: "custom", Code: 403,
			Message: `admission webhook "deny.example.com" denied the request without explanation`}},
	}
	s := newWebhookServer(t, true)
	for _, tc := range tests {
		s.handle("/deny", deny(tc.status))
		for _, k := range []kind{validating, mutating} {
			p := newPlugins(t, s.addr())
			p.configure(k, s, v1hook("deny.example.com", "/deny"))
			err := p.run(context.Background(), k, cmUpdate(nil))
			var got metav1.Status
			if se, ok := err.(interface{ Status() metav1.Status }); ok {
				got = se.Status()
			} else {
				t.Fatalf("%s %s: error %v (%T), want a StatusError", tc.name, k, err, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s %s: status = %+v, want %+v", tc.name, k, got, tc.want)
			}
		}
	}
}

// TestWarningsAndAuditAnnotations is how both dispatchers
// (k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go, validating/dispatcher.go)
// handle an answer's warnings and audit annotations: warnings are
// passed on as sent (the HTTP layer dedups), invalid annotation keys are
// dropped, and a denying webhook's warnings and annotations are kept.
func TestWarningsAndAuditAnnotations(t *testing.T) {
	s := newWebhookServer(t, true)
	s.handle("/warn", v1Reply(map[string]any{"allowed": true, "warnings": []string{"w1", "w1", "w2"},
		"auditAnnotations": map[string]string{"good": "v", "bad/key": "x", "invalid*key": "y"}}))
	s.handle("/denywarn", v1Reply(map[string]any{"allowed": false, "warnings": []string{"careful"},
		"auditAnnotations": map[string]string{"why": "policy"}, "status": map[string]any{"code": 403, "message": "no"}}))
	for _, k := range []kind{validating, mutating} {
		p := newPlugins(t, s.addr())
		p.configure(k, s, v1hook("warn.example.com", "/warn"))
		a := cmUpdate(nil)
		if err := p.run(context.Background(), k, a); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if got := a.Record.Warnings(); !reflect.DeepEqual(got, []string{"w1", "w1", "w2"}) {
			t.Errorf("%s: warnings = %q, want [w1 w1 w2]", k, got)
		}
		want := ann("warn.example.com/good", "v")
		if k == mutating {
			want = merge(want, mut(0, "warn.example.com", false))
		}
		wantAnnotations(t, a, want)

		p.configure(k, s, v1hook("deny.example.com", "/denywarn"))
		a = cmUpdate(nil)
		wantStatus(t, p.run(context.Background(), k, a), 403, "", `admission webhook "deny.example.com" denied the request: no`)
		if got := a.Record.Warnings(); !reflect.DeepEqual(got, []string{"careful"}) {
			t.Errorf("%s denied: warnings = %q, want [careful]", k, got)
		}
		want = ann("deny.example.com/why", "policy")
		if k == mutating {
			want = merge(want, mut(0, "deny.example.com", false))
		}
		wantAnnotations(t, a, want)
	}
}
