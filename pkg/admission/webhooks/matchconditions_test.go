package webhooks

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
	"github.com/admitd/admitd/pkg/admission/match"
)

var testCEL = admcel.NewCompiler(admcel.Options{})

func testDispatcher(authz admission.Authorizer) *dispatcher {
	return &dispatcher{name: ValidatingName, cel: testCEL, authorizer: authz, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func configMap(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns1", Labels: labels}}
}

func createAttrs(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, name string) *admission.Attributes {
	return &admission.Attributes{Name: name, Namespace: "ns1", Resource: gvr, Kind: gvk, Operation: admission.Create,
		Object: configMap(name, map[string]string{"app": "web"}), Record: admission.NewRecord()}
}

func hookWith(policy *admissionregistrationv1.FailurePolicyType, exprs ...string) *hook {
	h := &hook{Config: "vwc", Name: "v.example.com", FailurePolicy: policy,
		NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
		}}}
	for i, e := range exprs {
		h.MatchConditions = append(h.MatchConditions, admissionregistrationv1.MatchCondition{Name: "c" + string(rune('0'+i)), Expression: e})
	}
	return h
}

var (
	cmGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cmGVK     = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	fail      = admissionregistrationv1.Fail
	ignore    = admissionregistrationv1.Ignore
	allowAll  = admission.AuthorizerFunc(allow)
	missing   = "object.metadata.labels['missing-key'] == 'x'"
	missingEr = "expression 'object.metadata.labels['missing-key'] == 'x'' resulted in error: no such key: missing-key"
)

func allow(context.Context, admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
	return admission.AuthorizationAllow, "", nil
}

func TestShouldCallMatchConditions(t *testing.T) {
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	cases := []struct {
		name    string
		hook    *hook
		attrs   *admission.Attributes
		authz   admission.Authorizer
		call    bool
		err     string // the client-visible message, empty for none
		skipped string // the trace reason of a skip
	}{
		{name: "no conditions", hook: hookWith(&fail), call: true},
		{name: "true", hook: hookWith(&fail, "true", "object.metadata.labels.app == 'web'"), call: true},
		{name: "false skips", hook: hookWith(&fail, "true", "false"), skipped: `matchCondition "c1" is false`},
		{name: "false beats error", hook: hookWith(&fail, missing, "false"), skipped: `matchCondition "c1" is false`},
		{name: "error under Fail", hook: hookWith(&fail, missing), err: `configmaps "cm1" is forbidden: ` + missingEr},
		{name: "error under nil policy", hook: hookWith(nil, missing, "true"), err: `configmaps "cm1" is forbidden: ` + missingEr},
		{name: "error under Ignore", hook: hookWith(&ignore, missing), skipped: "matchConditions errored, failurePolicy Ignore"},
		{name: "two errors aggregated", hook: hookWith(&fail, missing, "object.nosuch == 1"),
			err: `configmaps "cm1" is forbidden: [` + missingEr + `, expression 'object.nosuch == 1' resulted in error: no such key: nosuch]`},
		{name: "empty name", hook: hookWith(&fail, missing), attrs: createAttrs(cmGVR, cmGVK, ""),
			err: `configmaps is forbidden: ` + missingEr},
		{name: "group resource", hook: hookWith(&fail, missing), attrs: createAttrs(widgets, schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "w"),
			err: `widgets.example.com "w" is forbidden: ` + missingEr},
		{name: "no authorizer", hook: hookWith(&fail, "authorizer.group('').resource('pods').check('get').allowed()"),
			err: `configmaps "cm1" is forbidden: expression 'authorizer.group('').resource('pods').check('get').allowed()' resulted in error: no such attribute(s): authorizer`},
		{name: "authorizer", hook: hookWith(&fail, "authorizer.group('').resource('pods').check('get').allowed()"), authz: allowAll, call: true},
		{name: "compile error", hook: hookWith(&fail, "params.x == 1"),
			err: "configmaps \"cm1\" is forbidden: compilation error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := testDispatcher(tc.authz)
			a := tc.attrs
			if a == nil {
				a = createAttrs(cmGVR, cmGVK, "cm1")
			}
			ctx := context.Background()
			mr := match.NewRequest(ctx, d.matchEnv(), a)
			inv, err := d.shouldCall(ctx, &mr, tc.hook, a)
			checkError(t, err, tc.err)
			if (inv != nil) != tc.call {
				t.Errorf("shouldCall = %v, want call %v", inv, tc.call)
			}
			if tc.skipped != "" {
				steps := a.Record.Steps()
				if len(steps) != 1 || steps[0].Skip != admission.SkipMatchCondition || steps[0].Matched || steps[0].Detail == nil ||
					!strings.HasPrefix(steps[0].Detail.Why.Explain(), tc.skipped) {
					t.Errorf("trace = %+v, want one unmatched step skipped by a matchCondition: %q", steps, tc.skipped)
				}
			}
		})
	}
}

func checkError(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("shouldCall error = %v, want none", err)
		}
		return
	}
	if err == nil || err.Error() != want {
		t.Fatalf("shouldCall error = %v, want %q", err, want)
	}
	if !apierrors.IsForbidden(err) {
		t.Errorf("shouldCall error %v is not a 403 Forbidden", err)
	}
}

// TestMatchConditionsSeeInvocationObjects checks that conditions read the
// invocation's objects (converted, and for mutating webhooks patched by
// earlier webhooks) and its kind, with the request's own resource.
func TestMatchConditionsSeeInvocationObjects(t *testing.T) {
	d := testDispatcher(nil)
	a := createAttrs(cmGVR, cmGVK, "cm1")
	equivalent := schema.GroupVersionKind{Version: "v2", Kind: "ConfigMap"}
	inv := &invocation{Resource: schema.GroupVersionResource{Version: "v2", Resource: "configmaps"}, Kind: equivalent,
		Object: configMap("cm1", map[string]string{"app": "patched"})}
	h := hookWith(&fail, "object.metadata.labels.app == 'patched'",
		"request.kind.version == 'v2' && request.resource.version == 'v1' && request.requestKind.version == 'v1'")
	got, err := d.matchConditions(context.Background(), h, a, inv)
	if err != nil || got != inv {
		t.Errorf("matchConditions = %v, %v; want the invocation", got, err)
	}
}

// TestMatchConditionsCompiledOnce checks that a hook's conditions are
// compiled on first use only.
func TestMatchConditionsCompiledOnce(t *testing.T) {
	h := hookWith(&fail, "true")
	if first := h.compiledConditions(testCEL); h.compiledConditions(testCEL) != first {
		t.Errorf("compiledConditions compiled twice")
	}
}

func BenchmarkShouldCall_3MatchConditions(b *testing.B) {
	d := testDispatcher(allowAll)
	h := hookWith(&fail, "object.metadata.labels.app == 'web'", "request.userInfo.username != 'system:admin'",
		"!has(object.metadata.annotations) || !('skip' in object.metadata.annotations)")
	a := createAttrs(cmGVR, cmGVK, "cm1")
	a.UserInfo.Username = "alice"
	ctx := context.Background()
	for b.Loop() {
		mr := match.NewRequest(ctx, d.matchEnv(), a)
		if inv, err := d.shouldCall(ctx, &mr, h, a); inv == nil || err != nil {
			b.Fatal(inv, err)
		}
	}
}
