package webhooks_test

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
)

const widgetReviewTail = `"kind":{"group":"example.com","version":"v1beta1","kind":"Widget"},` +
	`"resource":{"group":"example.com","version":"v1beta1","resource":"widgets"},` +
	`"requestKind":{"group":"example.com","version":"v1","kind":"Widget"},` +
	`"requestResource":{"group":"example.com","version":"v1","resource":"widgets"},` +
	`"name":"my-widget","namespace":"webhook-test","operation":"UPDATE",` +
	`"userInfo":{"username":"webhook-test","uid":"webhook-test","groups":["g1","system:authenticated"],"extra":{"k":["v"]}},` +
	`"object":{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"labels":{"widget.name":"my-widget"},"name":"my-widget","namespace":"webhook-test"},"spec":{"size":3}},` +
	`"oldObject":{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"my-widget","namespace":"webhook-test"},"spec":{"size":3}},` +
	`"dryRun":false,"options":{"kind":"UpdateOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"foo"}}}`

// TestRequestBody checks the exact AdmissionReview bytes (upstream's
// CreateAdmissionObjects, k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go,
// and its client, k8s.io/apiserver/pkg/util/webhook/client.go): the
// version is the first known one the webhook lists,
// kind/resource are the invocation's (here v1beta1 through matchPolicy
// Equivalent), requestKind/requestResource the request's; plus headers,
// the timeout parameter and the protocol (HTTP/2 only for loopback URLs).
func TestRequestBody(t *testing.T) {
	equivalentV1beta1 := func(h *hook) {
		h.matchPolicy = ptr(admissionregistrationv1.Equivalent)
		h.rules = []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1beta1"}, Resources: []string{"widgets", "widgets/status"}},
		}}
	}
	user := authenticationv1.UserInfo{Username: "webhook-test", UID: "webhook-test", Groups: []string{"g1", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}}
	widgetAttrs := func() *admission.Attributes {
		a := widgetUpdate(nil)
		a.UserInfo = user
		a.Options = &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}, FieldManager: "foo"}
		return a
	}
	statusAttrs := func() *admission.Attributes {
		a := widgetAttrs()
		a.Subresource = "status"
		return a
	}
	deleteAttrs := func() *admission.Attributes {
		a := cmDelete()
		a.DryRun = true
		return a
	}
	connectAttrs := func() *admission.Attributes {
		a := cmUpdate(nil)
		a.Operation, a.Options, a.OldObject = admission.Connect, nil, nil
		return a
	}
	tests := []struct {
		name  string
		hook  hook
		attrs func() *admission.Attributes
		proto string
		want  string
	}{
		{"v1 first", v1hook("v.example.com", "/allow", viaURL, versions("v1", "v1beta1"), equivalentV1beta1), widgetAttrs, "HTTP/2.0",
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"UID",` + widgetReviewTail},
		{"v1beta1 first", v1hook("v.example.com", "/allow", versions("v1beta1", "v1"), equivalentV1beta1), widgetAttrs, "HTTP/1.1",
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1beta1","request":{"uid":"UID",` + widgetReviewTail},
		{"unknown versions skipped", v1hook("v.example.com", "/allow", versions("v2", "v1beta1"), equivalentV1beta1), widgetAttrs, "HTTP/1.1",
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1beta1","request":{"uid":"UID",` + widgetReviewTail},
		{"subresource", v1hook("v.example.com", "/allow", viaURL, equivalentV1beta1), statusAttrs, "HTTP/2.0",
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"UID",` + strings.NewReplacer(
				`"resource":"widgets"},"requestKind"`, `"resource":"widgets"},"subResource":"status","requestKind"`,
				`"version":"v1","resource":"widgets"},"name"`, `"version":"v1","resource":"widgets"},"requestSubResource":"status","name"`,
			).Replace(widgetReviewTail)},
		{"DELETE dry run", v1hook("v.example.com", "/allow", viaURL), deleteAttrs, "HTTP/2.0",
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"UID",` +
				`"kind":{"group":"","version":"v1","kind":"ConfigMap"},"resource":{"group":"","version":"v1","resource":"configmaps"},` +
				`"requestKind":{"group":"","version":"v1","kind":"ConfigMap"},"requestResource":{"group":"","version":"v1","resource":"configmaps"},` +
				`"name":"my-cm","namespace":"webhook-test","operation":"DELETE","userInfo":{"username":"webhook-test","uid":"webhook-test"},` +
				`"object":null,"oldObject":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"my-cm","namespace":"webhook-test","labels":{"cm.name":"my-cm"}},"data":{"key":"value"}},` +
				`"dryRun":true,"options":{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1"}}}`},
		{"CONNECT", v1hook("v.example.com", "/allow"), connectAttrs, "HTTP/1.1",
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"UID",` +
				`"kind":{"group":"","version":"v1","kind":"ConfigMap"},"resource":{"group":"","version":"v1","resource":"configmaps"},` +
				`"requestKind":{"group":"","version":"v1","kind":"ConfigMap"},"requestResource":{"group":"","version":"v1","resource":"configmaps"},` +
				`"name":"my-cm","namespace":"webhook-test","operation":"CONNECT","userInfo":{"username":"webhook-test","uid":"webhook-test"},` +
				`"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"my-cm","namespace":"webhook-test","labels":{"cm.name":"my-cm"}},"data":{"key":"value"}},` +
				`"oldObject":null,"dryRun":false,"options":null}}`},
	}
	s := newWebhookServer(t, true)
	s.handle("/allow", allow)
	for _, tc := range tests {
		for _, k := range []kind{validating, mutating} {
			p := newPlugins(t, s.addr())
			p.configure(k, s, tc.hook)
			before := len(s.callsTo("/allow"))
			if err := p.run(context.Background(), k, tc.attrs()); err != nil {
				t.Fatalf("%s %s: %v", tc.name, k, err)
			}
			calls := s.callsTo("/allow")[before:]
			if len(calls) != 1 {
				t.Fatalf("%s %s: %d calls, want 1", tc.name, k, len(calls))
			}
			c := calls[0]
			want := strings.Replace(tc.want, `"uid":"UID"`, `"uid":"`+string(c.Review.Request.UID)+`"`, 1)
			if got := strings.TrimSpace(string(c.Body)); got != want {
				t.Errorf("%s %s: body\n%s\nwant\n%s", tc.name, k, got, want)
			}
			if len(c.Review.Request.UID) != 36 {
				t.Errorf("%s %s: uid %q is not a UUID", tc.name, k, c.Review.Request.UID)
			}
			if c.Proto != tc.proto || c.RawQuery != "timeout=10s" || c.Header.Get("Content-Type") != "application/json" ||
				c.Header.Get("Accept") != "application/json, */*" {
				t.Errorf("%s %s: %s ?%s Content-Type %q Accept %q, want %s ?timeout=10s application/json \"application/json, */*\"",
					tc.name, k, c.Proto, c.RawQuery, c.Header.Get("Content-Type"), c.Header.Get("Accept"), tc.proto)
			}
		}
	}
}

// TestFreshUIDPerCall: every call, including a reinvocation, gets its own
// uid, as CreateAdmissionObjects gives it
// (k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go).
func TestFreshUIDPerCall(t *testing.T) {
	s := newWebhookServer(t, true)
	s.handle("/allow", allow)
	p := newPlugins(t, s.addr())
	p.configure(mutating, s, wh("a", "/allow"), wh("b", "/allow"))
	for i := 0; i < 2; i++ {
		if err := p.mutating.Admit(context.Background(), cmUpdate(nil)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, c := range s.callsTo("/allow") {
		uid := string(c.Review.Request.UID)
		if seen[uid] {
			t.Errorf("uid %s sent twice", uid)
		}
		seen[uid] = true
	}
}
