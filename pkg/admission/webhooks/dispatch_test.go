package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
)

// The endpoints of upstream's test webhook server
// (k8s.io/apiserver/pkg/admission/plugin/webhook/testing/webhook_server.go), served by every
// dispatch case.
func scriptUpstreamEndpoints(s *webhookServer) {
	s.handle("/allow", allow)
	s.handle("/noop", noop)
	s.handle("/disallow", deny(&metav1.Status{Code: 403}))
	s.handle("/disallowReason", deny(&metav1.Status{Message: "you shall not pass", Code: 403}))
	s.handle("/shouldNotBeCalled", deny(&metav1.Status{Message: "doesn't expect to be called", Code: 400}))
	s.handle("/internalErr", rawReply(500, "text/plain; charset=utf-8", "webhook internal server error"))
	s.handle("/removeLabel", jsonPatch(`[{"op": "remove", "path": "/metadata/labels/remove"}]`, map[string]string{"key1": "value1"}))
	s.handle("/addLabel", jsonPatch(`[{"op": "add", "path": "/metadata/labels/added", "value": "test"}]`, nil))
	s.handle("/invalidPatch", jsonPatch(`[{`, nil))
	s.handle("/invalidMutation", jsonPatch(`[{"op": "add", "CORRUPTED_KEY":}]`, nil))
	s.handle("/nonStatusError", hijack("bad-http", false))
	s.handle("/nilResponse", rawReply(200, "application/json", `{}`))
	s.handle("/invalidAnnotation", allowWith(map[string]string{"invalid*key": "value1"}))
}

// deny answers allowed=false with the given status.
func deny(st *metav1.Status) behaviour {
	return func(w http.ResponseWriter, _ *http.Request, in *reviewIn) {
		respond(w, in, admissionv1.AdmissionResponse{Allowed: false, Result: st})
	}
}

// wh is a webhook of upstream's harness: v1beta1 reviews, service form.
func wh(name, path string, opts ...func(*hook)) hook {
	h := hook{name: name, path: path, versions: []string{"v1beta1"}}
	for _, o := range opts {
		o(&h)
	}
	return h
}

func policy(p *admissionregistrationv1.FailurePolicyType) func(*hook) {
	return func(h *hook) { h.failurePolicy = p }
}

func viaURL(h *hook) { h.url = true }

func sideEffects(se admissionregistrationv1.SideEffectClass) func(*hook) {
	return func(h *hook) { h.sideEffects = &se }
}

func noSideEffects(h *hook) { h.noSideEffects = true }

func nsSelector(s *metav1.LabelSelector) func(*hook) {
	return func(h *hook) { h.namespaceSelector = s }
}

func objSelector(s *metav1.LabelSelector) func(*hook) { return func(h *hook) { h.objectSelector = s } }

func reinvoke(p admissionregistrationv1.ReinvocationPolicyType) func(*hook) {
	return func(h *hook) { h.reinvocation = &p }
}

func versions(v ...string) func(*hook) { return func(h *hook) { h.versions = v } }

func createOnly(h *hook) {
	h.rules = []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}}}
}

func runlevel(op metav1.LabelSelectorOperator, v string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "runlevel", Operator: op, Values: []string{v}}}}
}

// ann builds an annotation map from key, value pairs.
func ann(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// mut is the mutation annotation (and any further pairs) as a map.
func mut(index int, webhook string, mutated bool, kv ...string) map[string]string {
	k, v := mutationAnnotation(0, index, webhook, mutated)
	return ann(append([]string{k, v}, kv...)...)
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func patchAnn(index int, webhook, patch string) map[string]string {
	k, v := patchAnnotation(0, index, webhook, patch)
	return ann(k, v)
}

// wantErr is the status a client receives; for parallel validating calls
// any of messages may win.
type wantErr struct {
	code     int32
	reason   metav1.StatusReason
	messages []string
}

func internal(causes ...string) *wantErr {
	w := &wantErr{code: 500, reason: metav1.StatusReasonInternalError}
	for _, c := range causes {
		w.messages = append(w.messages, "Internal error occurred: "+c)
	}
	return w
}

func denied(code int32, msg string) *wantErr { return &wantErr{code: code, messages: []string{msg}} }

func badRequest(msg string) *wantErr {
	return &wantErr{code: 400, reason: metav1.StatusReasonBadRequest, messages: []string{msg}}
}

// outcome is what one plugin does with a case.
type outcome struct {
	err         *wantErr // nil: admitted
	annotations map[string]string
	labels      map[string]string // labels of the final object; nil: not checked
	called      []string          // paths called (validating: sorted)
}

type dispatchCase struct {
	name   string
	hooks  []hook
	crd    bool
	labels map[string]string // more labels on the request object
	dryRun bool
	// serve scripts endpoints beyond upstream's; attrs replaces the request.
	serve map[string]behaviour
	attrs func() *admission.Attributes
	// want is per plugin; a case runs through the plugins it names.
	want map[kind]outcome
}

const internalErrMsg = `failed to call webhook: an error on the server ("webhook internal server error") has prevented the request from succeeding`

func internalErrABC(p *admissionregistrationv1.FailurePolicyType) []hook {
	return []hook{wh("internalErr A", "/internalErr", policy(p)), wh("internalErr B", "/internalErr", policy(p)), wh("internalErr C", "/internalErr", policy(p))}
}

// upstreamCases are NewNonMutatingTestCases and NewMutatingTestCases
// (k8s.io/apiserver/pkg/admission/plugin/webhook/testing/testcase.go), with a
// ConfigMap for the Pod and widgets.example.com for the "CRD".
var upstreamCases = []dispatchCase{
	{name: "1 no match", hooks: []hook{wh("nomatch", "/disallow", createOnly)},
		want: map[kind]outcome{validating: {}, mutating: {}}},
	{name: "2 allow", hooks: []hook{wh("allow.example.com", "/allow")}, want: map[kind]outcome{
		validating: {annotations: ann("allow.example.com/key1", "value1"), called: []string{"/allow"}},
		mutating:   {annotations: mut(0, "allow.example.com", false, "allow.example.com/key1", "value1"), called: []string{"/allow"}}}},
	{name: "3 disallow", hooks: []hook{wh("disallow", "/disallow")}, want: map[kind]outcome{
		validating: {err: denied(403, `admission webhook "disallow" denied the request without explanation`)},
		mutating:   {err: denied(403, `admission webhook "disallow" denied the request without explanation`), annotations: mut(0, "disallow", false)}}},
	{name: "4 disallow with reason", hooks: []hook{wh("disallowReason", "/disallowReason")}, want: map[kind]outcome{
		validating: {err: denied(403, `admission webhook "disallowReason" denied the request: you shall not pass`)},
		mutating:   {err: denied(403, `admission webhook "disallowReason" denied the request: you shall not pass`), annotations: mut(0, "disallowReason", false)}}},
	{name: "5 namespaceSelector In excludes", hooks: []hook{wh("disallow", "/disallow", nsSelector(runlevel(metav1.LabelSelectorOpIn, "1")))},
		want: map[kind]outcome{validating: {}, mutating: {}}},
	{name: "6 namespaceSelector NotIn excludes", hooks: []hook{wh("disallow", "/disallow", nsSelector(runlevel(metav1.LabelSelectorOpNotIn, "0")))},
		want: map[kind]outcome{validating: {}, mutating: {}}},
	{name: "7 three failures ignored", hooks: internalErrABC(ignore), want: map[kind]outcome{
		validating: {annotations: ann(
			"failed-open.validating.webhook.admission.k8s.io/round_0_index_0", "internalErr A",
			"failed-open.validating.webhook.admission.k8s.io/round_0_index_1", "internalErr B",
			"failed-open.validating.webhook.admission.k8s.io/round_0_index_2", "internalErr C"),
			called: []string{"/internalErr", "/internalErr", "/internalErr"}},
		mutating: {annotations: merge(mut(0, "internalErr A", false), mut(1, "internalErr B", false), mut(2, "internalErr C", false), ann(
			"failed-open.mutation.webhook.admission.k8s.io/round_0_index_0", "internalErr A",
			"failed-open.mutation.webhook.admission.k8s.io/round_0_index_1", "internalErr B",
			"failed-open.mutation.webhook.admission.k8s.io/round_0_index_2", "internalErr C")),
			called: []string{"/internalErr", "/internalErr", "/internalErr"}}}},
	{name: "8 three failures, nil policy", hooks: internalErrABC(nil), want: map[kind]outcome{
		validating: {err: internal(`failed calling webhook "internalErr A": `+internalErrMsg, `failed calling webhook "internalErr B": `+internalErrMsg,
			`failed calling webhook "internalErr C": `+internalErrMsg), called: []string{"/internalErr", "/internalErr", "/internalErr"}},
		mutating: {err: internal(`failed calling webhook "internalErr A": ` + internalErrMsg), annotations: mut(0, "internalErr A", false),
			called: []string{"/internalErr"}}}},
	{name: "9 three failures, Fail", hooks: internalErrABC(fail), want: map[kind]outcome{
		validating: {err: internal(`failed calling webhook "internalErr A": `+internalErrMsg, `failed calling webhook "internalErr B": `+internalErrMsg,
			`failed calling webhook "internalErr C": `+internalErrMsg), called: []string{"/internalErr", "/internalErr", "/internalErr"}},
		mutating: {err: internal(`failed calling webhook "internalErr A": ` + internalErrMsg), annotations: mut(0, "internalErr A", false),
			called: []string{"/internalErr"}}}},
	{name: "10 invalid client config", hooks: []hook{wh("invalidClientConfig", "", func(h *hook) { h.emptyClient = true })}, want: map[kind]outcome{
		validating: {err: internal(`failed calling webhook "invalidClientConfig": could not get REST client: failed calling webhook "invalidClientConfig": webhook configuration must have either service or URL`)},
		mutating: {err: internal(`failed calling webhook "invalidClientConfig": could not get REST client: failed calling webhook "invalidClientConfig": webhook configuration must have either service or URL`),
			annotations: mut(0, "invalidClientConfig", false)}}},
	{name: "11 non-status error", hooks: []hook{wh("nonStatusError", "/nonStatusError")}, want: map[kind]outcome{
		validating: {err: internal(`failed calling webhook "nonStatusError": failed to call webhook: Post "https://webhook-test.default.svc:443/nonStatusError?timeout=10s": net/http: HTTP/1.x transport connection broken: malformed HTTP response "bad-http"`)},
		mutating: {err: internal(`failed calling webhook "nonStatusError": failed to call webhook: Post "https://webhook-test.default.svc:443/nonStatusError?timeout=10s": net/http: HTTP/1.x transport connection broken: malformed HTTP response "bad-http"`),
			annotations: mut(0, "nonStatusError", false)}}},
	{name: "12 allow via URL", hooks: []hook{wh("allow.example.com", "/allow", viaURL)}, want: map[kind]outcome{
		validating: {annotations: ann("allow.example.com/key1", "value1"), called: []string{"/allow"}},
		mutating:   {annotations: mut(0, "allow.example.com", false, "allow.example.com/key1", "value1"), called: []string{"/allow"}}}},
	{name: "13 disallow via URL", hooks: []hook{wh("disallow", "/disallow", viaURL)}, want: map[kind]outcome{
		validating: {err: denied(403, `admission webhook "disallow" denied the request without explanation`)},
		mutating:   {err: denied(403, `admission webhook "disallow" denied the request without explanation`), annotations: mut(0, "disallow", false)}}},
	{name: "14 nil response, Ignore", hooks: []hook{wh("nilResponse", "/nilResponse", viaURL, policy(ignore))}, want: map[kind]outcome{
		validating: {annotations: ann("failed-open.validating.webhook.admission.k8s.io/round_0_index_0", "nilResponse")},
		mutating:   {annotations: mut(0, "nilResponse", false, "failed-open.mutation.webhook.admission.k8s.io/round_0_index_0", "nilResponse")}}},
	{name: "15 nil response, Fail", hooks: []hook{wh("nilResponse", "/nilResponse", viaURL, policy(fail))}, want: map[kind]outcome{
		validating: {err: internal(`failed calling webhook "nilResponse": received invalid webhook response: webhook response was absent`)},
		mutating: {err: internal(`failed calling webhook "nilResponse": received invalid webhook response: webhook response was absent`),
			annotations: mut(0, "nilResponse", false)}}},
	{name: "16 dry run, no match", dryRun: true, hooks: []hook{wh("nomatch", "/disallow", createOnly, sideEffects(admissionregistrationv1.SideEffectClassSome))},
		want: map[kind]outcome{validating: {}, mutating: {}}},
	{name: "17 dry run, sideEffects Unknown", dryRun: true, hooks: []hook{wh("allow", "/allow", sideEffects(admissionregistrationv1.SideEffectClassUnknown))}, want: map[kind]outcome{
		validating: {err: badRequest(`admission webhook "allow" does not support dry run`)},
		mutating:   {err: badRequest(`admission webhook "allow" does not support dry run`), annotations: mut(0, "allow", false)}}},
	{name: "18 dry run, sideEffects None", dryRun: true, hooks: []hook{wh("allow", "/allow", sideEffects(admissionregistrationv1.SideEffectClassNone))}, want: map[kind]outcome{
		validating: {annotations: ann("allow/key1", "value1"), called: []string{"/allow"}},
		mutating:   {annotations: mut(0, "allow", false, "allow/key1", "value1"), called: []string{"/allow"}}}},
	{name: "19 dry run, sideEffects Some", dryRun: true, hooks: []hook{wh("allow", "/allow", sideEffects(admissionregistrationv1.SideEffectClassSome))}, want: map[kind]outcome{
		validating: {err: badRequest(`admission webhook "allow" does not support dry run`)},
		mutating:   {err: badRequest(`admission webhook "allow" does not support dry run`), annotations: mut(0, "allow", false)}}},
	{name: "20 dry run, sideEffects NoneOnDryRun", dryRun: true, hooks: []hook{wh("allow", "/allow", sideEffects(admissionregistrationv1.SideEffectClassNoneOnDryRun))}, want: map[kind]outcome{
		validating: {annotations: ann("allow/key1", "value1"), called: []string{"/allow"}},
		mutating:   {annotations: mut(0, "allow", false, "allow/key1", "value1"), called: []string{"/allow"}}}},
	{name: "21 invalid annotation key dropped", hooks: []hook{wh("invalidAnnotation", "/invalidAnnotation", viaURL)}, want: map[kind]outcome{
		validating: {called: []string{"/invalidAnnotation"}},
		mutating:   {annotations: mut(0, "invalidAnnotation", false), called: []string{"/invalidAnnotation"}}}},
	{name: "22 objectSelector excludes", hooks: []hook{wh("allow.example.com", "/allow"),
		wh("shouldNotBeCalled", "/shouldNotBeCalled", objSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"label": "nonexistent"}}))},
		want: map[kind]outcome{
			validating: {annotations: ann("allow.example.com/key1", "value1"), called: []string{"/allow"}},
			mutating:   {annotations: mut(0, "allow.example.com", false, "allow.example.com/key1", "value1"), called: []string{"/allow"}}}},
	{name: "23 objectSelector excludes, CRD", crd: true, hooks: []hook{wh("allow.example.com", "/allow"),
		wh("shouldNotBeCalled", "/shouldNotBeCalled", objSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"label": "nonexistent"}}))},
		want: map[kind]outcome{
			validating: {annotations: ann("allow.example.com/key1", "value1"), called: []string{"/allow"}},
			mutating:   {annotations: mut(0, "allow.example.com", false, "allow.example.com/key1", "value1"), called: []string{"/allow"}}}},
	// NewMutatingTestCases
	{name: "27 remove label", labels: map[string]string{"remove": "me"}, hooks: []hook{wh("removelabel.example.com", "/removeLabel")}, want: map[kind]outcome{
		mutating: {labels: map[string]string{"cm.name": "my-cm"}, annotations: merge(ann("removelabel.example.com/key1", "value1"),
			mut(0, "removelabel.example.com", true), patchAnn(0, "removelabel.example.com", `[{"op":"remove","path":"/metadata/labels/remove"}]`))}}},
	{name: "28 add label", hooks: []hook{wh("addLabel", "/addLabel")}, want: map[kind]outcome{
		mutating: {labels: map[string]string{"cm.name": "my-cm", "added": "test"}, annotations: merge(mut(0, "addLabel", true),
			patchAnn(0, "addLabel", `[{"op":"add","path":"/metadata/labels/added","value":"test"}]`))}}},
	{name: "29 add label, CRD", crd: true, hooks: []hook{wh("addLabel", "/addLabel")}, want: map[kind]outcome{
		mutating: {labels: map[string]string{"widget.name": "my-widget", "added": "test"}, annotations: merge(mut(0, "addLabel", true),
			patchAnn(0, "addLabel", `[{"op":"add","path":"/metadata/labels/added","value":"test"}]`))}}},
	{name: "30 remove label, CRD", crd: true, labels: map[string]string{"remove": "me"}, hooks: []hook{wh("removelabel.example.com", "/removeLabel")}, want: map[kind]outcome{
		mutating: {labels: map[string]string{"widget.name": "my-widget"}, annotations: merge(ann("removelabel.example.com/key1", "value1"),
			mut(0, "removelabel.example.com", true), patchAnn(0, "removelabel.example.com", `[{"op":"remove","path":"/metadata/labels/remove"}]`))}}},
	{name: "31 invalid mutation", hooks: []hook{wh("invalidMutation", "/invalidMutation")}, want: map[kind]outcome{
		mutating: {err: internal(`failed calling webhook "invalidMutation": received undecodable patch in webhook response: invalid character '}' looking for beginning of value`),
			annotations: mut(0, "invalidMutation", false)}}},
	{name: "32 invalid patch", hooks: []hook{wh("invalidPatch", "/invalidPatch")}, want: map[kind]outcome{
		mutating: {err: internal(`failed calling webhook "invalidPatch": received undecodable patch in webhook response: unexpected end of JSON input`),
			annotations: mut(0, "invalidPatch", false)}}},
	{name: "33 invalid patch, Ignore", hooks: []hook{wh("invalidPatch", "/invalidPatch", policy(ignore))}, want: map[kind]outcome{
		mutating: {labels: map[string]string{"cm.name": "my-cm"},
			annotations: mut(0, "invalidPatch", false, "failed-open.mutation.webhook.admission.k8s.io/round_0_index_0", "invalidPatch")}}},
	{name: "36 dry run, removeLabel with side effects", dryRun: true, labels: map[string]string{"remove": "me"},
		hooks: []hook{wh("removeLabel", "/removeLabel", sideEffects(admissionregistrationv1.SideEffectClassUnknown))}, want: map[kind]outcome{
			mutating: {err: badRequest(`admission webhook "removeLabel" does not support dry run`), annotations: mut(0, "removeLabel", false)}}},
	{name: "37 first webhook's patch unselects the second", labels: map[string]string{"remove": "me"}, hooks: []hook{
		wh("removelabel.example.com", "/removeLabel", objSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"remove": "me"}})),
		wh("shouldNotBeCalled", "/shouldNotBeCalled", objSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"remove": "me"}}))},
		want: map[kind]outcome{mutating: {labels: map[string]string{"cm.name": "my-cm"}, called: []string{"/removeLabel"},
			annotations: merge(ann("removelabel.example.com/key1", "value1"), mut(0, "removelabel.example.com", true),
				patchAnn(0, "removelabel.example.com", `[{"op":"remove","path":"/metadata/labels/remove"}]`))}}},
	{name: "38 first webhook's patch unselects the second, CRD", crd: true, labels: map[string]string{"remove": "me"}, hooks: []hook{
		wh("removelabel.example.com", "/removeLabel", objSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"remove": "me"}})),
		wh("shouldNotBeCalled", "/shouldNotBeCalled", objSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"remove": "me"}}))},
		want: map[kind]outcome{mutating: {labels: map[string]string{"widget.name": "my-widget"}, called: []string{"/removeLabel"},
			annotations: merge(ann("removelabel.example.com/key1", "value1"), mut(0, "removelabel.example.com", true),
				patchAnn(0, "removelabel.example.com", `[{"op":"remove","path":"/metadata/labels/remove"}]`))}}},
	{name: "42 noop", hooks: []hook{wh("noop", "/noop")}, want: map[kind]outcome{
		mutating: {labels: map[string]string{"cm.name": "my-cm"}, annotations: mut(0, "noop", false), called: []string{"/noop"}}}},
	// Spec 4: nil sideEffects on a dry run is a call failure.
	{name: "dry run, nil sideEffects, Fail", dryRun: true, hooks: []hook{wh("allow", "/allow", noSideEffects, policy(fail))}, want: map[kind]outcome{
		validating: {err: internal(`failed calling webhook "allow": Webhook SideEffects is nil`)},
		mutating:   {err: internal(`failed calling webhook "allow": Webhook SideEffects is nil`), annotations: mut(0, "allow", false)}}},
	{name: "dry run, nil sideEffects, Ignore", dryRun: true, hooks: []hook{wh("allow", "/allow", noSideEffects, policy(ignore))}, want: map[kind]outcome{
		validating: {annotations: ann("failed-open.validating.webhook.admission.k8s.io/round_0_index_0", "allow")},
		mutating:   {annotations: mut(0, "allow", false, "failed-open.mutation.webhook.admission.k8s.io/round_0_index_0", "allow")}}},
	{name: "dry run, sideEffects Some, Ignore still rejects", dryRun: true, hooks: []hook{wh("allow", "/allow", policy(ignore), sideEffects(admissionregistrationv1.SideEffectClassSome))}, want: map[kind]outcome{
		validating: {err: badRequest(`admission webhook "allow" does not support dry run`)},
		mutating:   {err: badRequest(`admission webhook "allow" does not support dry run`), annotations: mut(0, "allow", false)}}},
	// Spec 7/8.2: the validating fail-open index counts matching webhooks
	// only; the mutating one counts the full list.
	{name: "failed-open index", hooks: []hook{wh("nomatch", "/disallow", createOnly), wh("internalErr", "/internalErr", policy(ignore))}, want: map[kind]outcome{
		validating: {annotations: ann("failed-open.validating.webhook.admission.k8s.io/round_0_index_0", "internalErr")},
		mutating:   {annotations: mut(1, "internalErr", false, "failed-open.mutation.webhook.admission.k8s.io/round_0_index_1", "internalErr")}}},
}

// TestDispatch runs the shared case table through both plugins, against a
// real HTTPS server speaking HTTP/2 (URL webhooks on 127.0.0.1) and
// HTTP/1.1 (service webhooks).
func TestDispatch(t *testing.T) {
	runDispatchCases(t, upstreamCases)
}

func runDispatchCases(t *testing.T, cases []dispatchCase) {
	for _, tc := range cases {
		for _, k := range []kind{validating, mutating} {
			want, ok := tc.want[k]
			if !ok {
				continue
			}
			t.Run(tc.name+"/"+string(k), func(t *testing.T) {
				t.Parallel()
				s := newWebhookServer(t, true)
				scriptUpstreamEndpoints(s)
				for path, b := range tc.serve {
					s.handle(path, b)
				}
				p := newPlugins(t, s.addr())
				p.configure(k, s, tc.hooks...)
				a := cmUpdate(tc.labels)
				switch {
				case tc.attrs != nil:
					a = tc.attrs()
				case tc.crd:
					a = widgetUpdate(tc.labels)
				}
				a.DryRun = tc.dryRun
				checkOutcome(t, a, p.run(context.Background(), k, a), want, s, k)
			})
		}
	}
}

func checkOutcome(t *testing.T, a *admission.Attributes, err error, want outcome, s *webhookServer, k kind) {
	t.Helper()
	if want.err == nil {
		if err != nil {
			t.Fatalf("error = %v, want admitted", err)
		}
	} else {
		checkErr(t, err, want.err)
	}
	wantAnnotations(t, a, want.annotations)
	if want.labels != nil {
		if got := labelsOf(t, a.Object); fmt.Sprint(got) != fmt.Sprint(want.labels) {
			t.Errorf("labels = %v, want %v", got, want.labels)
		}
	}
	got := s.paths()
	if k == validating {
		slices.Sort(got)
	}
	if want.called != nil && !slices.Equal(got, want.called) {
		t.Errorf("calls = %q, want %q", got, want.called)
	}
	if want.called == nil && slices.Contains(got, "/shouldNotBeCalled") {
		t.Errorf("calls = %q: shouldNotBeCalled was called", got)
	}
}

func checkErr(t *testing.T, err error, w *wantErr) {
	t.Helper()
	if err == nil {
		t.Fatalf("admitted, want %d %q", w.code, w.messages)
	}
	msg := err.Error()
	for _, m := range w.messages {
		if m == msg {
			wantStatus(t, err, w.code, w.reason, m)
			return
		}
	}
	t.Fatalf("error = %q, want one of %q", msg, w.messages)
}
