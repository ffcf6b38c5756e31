package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/webhooks"
)

// addLabel is an endpoint that adds label key=true.
func addLabel(key string) behaviour {
	return jsonPatch(`[{"op":"add","path":"/metadata/labels/`+key+`","value":"true"}]`, nil)
}

// TestMutatingOrder: configurations run in name order whatever their order
// in the source, webhooks in list order within one, and each webhook sees
// the patches of those before it (the sort by name in
// k8s.io/apiserver/pkg/admission/configuration/mutating_webhook_manager.go;
// k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go).
func TestMutatingOrder(t *testing.T) {
	s := newWebhookServer(t, true)
	for _, n := range []string{"a1", "a2", "b1", "b2"} {
		s.handle("/"+n, addLabel(n))
	}
	p := newPlugins(t, s.addr())
	p.src.set([]*admissionregistrationv1.MutatingWebhookConfiguration{
		mutatingConfig("b-config", s, v1hook("b1", "/b1"), v1hook("b2", "/b2")),
		mutatingConfig("a-config", s, v1hook("a1", "/a1"), v1hook("a2", "/a2")),
	}, nil)
	a := cmUpdate(nil)
	if err := p.mutating.Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if got, want := s.paths(), []string{"/a1", "/a2", "/b1", "/b2"}; !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
	seen := []string{}
	for i, c := range s.calls {
		for _, prev := range seen {
			if !strings.Contains(string(c.Review.Request.Object.Raw), `"`+prev+`":"true"`) {
				t.Errorf("call %d (%s) does not see label %s of an earlier webhook: %s", i, c.Path, prev, c.Review.Request.Object.Raw)
			}
		}
		seen = append(seen, strings.TrimPrefix(c.Path, "/"))
	}
	want := map[string]string{}
	for i, n := range []string{"a1", "a2", "b1", "b2"} {
		cfg := map[byte]string{'a': "a-config", 'b': "b-config"}[n[0]]
		want[fmt.Sprintf("mutation.webhook.admission.k8s.io/round_0_index_%d", i)] = fmt.Sprintf(`{"configuration":%q,"webhook":%q,"mutated":true}`, cfg, n)
		want[fmt.Sprintf("patch.webhook.admission.k8s.io/round_0_index_%d", i)] = fmt.Sprintf(
			`{"configuration":%q,"webhook":%q,"patch":[{"op":"add","path":"/metadata/labels/%s","value":"true"}],"patchType":"JSONPatch"}`, cfg, n, n)
	}
	wantAnnotations(t, a, want)
	if got := labelsOf(t, a.Object); len(got) != 5 {
		t.Errorf("labels = %v, want cm.name and the four added", got)
	}
}

// fakeInTree is a built-in mutating plugin placed before the webhook
// plugin; when mutate is set it changes a label on every run.
type fakeInTree struct {
	trace  *trace
	mutate bool
	runs   int
}

func (f *fakeInTree) Handles(admission.Operation) bool { return true }

func (f *fakeInTree) Admit(_ context.Context, a *admission.Attributes) error {
	f.runs++
	f.trace.add("intree")
	if f.mutate {
		a.Object.(*corev1.ConfigMap).Labels["intree"] = strconv.Itoa(f.runs)
	}
	return nil
}

// TestReinvocation checks the traces of upstream's reinvocation for the
// chain [FakeInTree, MutatingAdmissionWebhook]
// (k8s.io/apiserver/pkg/admission/reinvocation.go and
// k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/reinvocationcontext.go),
// and the reinvocation cases of NewMutatingTestCases
// (k8s.io/apiserver/pkg/admission/plugin/webhook/testing/testcase.go).
func TestReinvocation(t *testing.T) {
	ifNeeded, never := admissionregistrationv1.IfNeededReinvocationPolicy, admissionregistrationv1.NeverReinvocationPolicy
	tests := []struct {
		name   string
		hooks  []hook
		intree bool // the in-tree plugin mutates
		labels map[string]string
		want   []string
		ann    map[string]string // checked when set
	}{
		{name: "A IfNeeded, B Never, C IfNeeded no-op", hooks: []hook{v1hook("A", "/A", reinvoke(ifNeeded)), v1hook("B", "/B", reinvoke(never)), v1hook("C", "/C", reinvoke(ifNeeded))},
			want: []string{"intree", "A", "B", "C", "intree", "A"},
			ann: merge(mut(0, "A", true), patchAnn(0, "A", `[{"op":"add","path":"/metadata/labels/a","value":"true"}]`),
				mut(1, "B", true), patchAnn(1, "B", `[{"op":"add","path":"/metadata/labels/b","value":"true"}]`),
				mut(2, "C", false), round1(0, "A", false, `[{"op":"add","path":"/metadata/labels/a","value":"true"}]`))},
		{name: "same, in-tree mutates every run", intree: true,
			hooks: []hook{v1hook("A", "/A", reinvoke(ifNeeded)), v1hook("B", "/B", reinvoke(never)), v1hook("C", "/C", reinvoke(ifNeeded))},
			want:  []string{"intree", "A", "B", "C", "intree", "A", "C"}},
		{name: "only C, in-tree mutates", intree: true, hooks: []hook{v1hook("C", "/C", reinvoke(ifNeeded))},
			want: []string{"intree", "C"}},
		{name: "A and B IfNeeded", hooks: []hook{v1hook("A", "/A", reinvoke(ifNeeded)), v1hook("B", "/B", reinvoke(ifNeeded))},
			want: []string{"intree", "A", "B", "intree", "A"}},
		{name: "39 addLabel then removeLabel, IfNeeded", labels: map[string]string{"remove": "me"},
			hooks: []hook{wh("addLabel", "/addLabel", reinvoke(ifNeeded)), wh("removeLabel", "/removeLabel", reinvoke(ifNeeded))},
			want:  []string{"intree", "addLabel", "removeLabel", "intree", "addLabel"},
			ann: merge(mut(0, "addLabel", true), patchAnn(0, "addLabel", addLabelPatch),
				mut(1, "removeLabel", true), patchAnn(1, "removeLabel", `[{"op":"remove","path":"/metadata/labels/remove"}]`),
				round1(0, "addLabel", false, addLabelPatch))}, // "removeLabel/key1" is not a qualified name: dropped
		{name: "40 addLabel Never", hooks: []hook{wh("addLabel", "/addLabel", reinvoke(never))},
			want: []string{"intree", "addLabel", "intree"}},
		{name: "41 addLabel, policy nil", hooks: []hook{wh("addLabel", "/addLabel")},
			want: []string{"intree", "addLabel", "intree"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newWebhookServer(t, true)
			s.trace = &trace{}
			scriptUpstreamEndpoints(s)
			for _, n := range []string{"A", "B"} {
				s.handle("/"+n, addLabel(strings.ToLower(n)))
			}
			s.handle("/C", noop)
			p := newPlugins(t, s.addr())
			p.configure(mutating, s, tc.hooks...)
			chain := admission.NewChain(
				admission.NamedPlugin{Name: "FakeInTree", Plugin: &fakeInTree{trace: s.trace, mutate: tc.intree}},
				admission.NamedPlugin{Name: webhooks.MutatingName, Plugin: p.mutating})
			a := cmUpdate(tc.labels)
			if err := chain.Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			if got := s.trace.get(); !slices.Equal(got, tc.want) {
				t.Errorf("calls = %q, want %q", got, tc.want)
			}
			if tc.ann != nil {
				wantAnnotations(t, a, tc.ann)
			}
		})
	}
}

// round1 is the annotations of a reinvoked webhook that applied patch.
func round1(index int, webhook string, mutated bool, patch string) map[string]string {
	k, v := mutationAnnotation(1, index, webhook, mutated)
	pk, pv := patchAnnotation(1, index, webhook, patch)
	return ann(k, v, pk, pv)
}

// TestValidatingParallel: as upstream's validating dispatcher
// (k8s.io/apiserver/pkg/admission/plugin/webhook/validating/dispatcher.go), matching webhooks are called
// concurrently, the dispatcher waits for all, the first error to arrive is
// returned, and every webhook's annotations are kept.
func TestValidatingParallel(t *testing.T) {
	s := newWebhookServer(t, true)
	arrived := map[string]chan struct{}{"p1": make(chan struct{}), "p2": make(chan struct{})}
	barrier := func(name, other string) behaviour {
		return func(w http.ResponseWriter, r *http.Request, in *reviewIn) {
			close(arrived[name])
			select {
			case <-arrived[other]:
				allowWith(map[string]string{"seen": other})(w, r, in)
			case <-time.After(3 * time.Second):
				deny(&metav1.Status{Message: "the other webhook was never called concurrently"})(w, r, in)
			}
		}
	}
	s.handle("/p1", barrier("p1", "p2"))
	s.handle("/p2", barrier("p2", "p1"))
	p := newPlugins(t, s.addr())
	p.configure(validating, s, v1hook("p1.example.com", "/p1"), v1hook("p2.example.com", "/p2"))
	a := cmUpdate(nil)
	if err := p.validating.Validate(context.Background(), a); err != nil {
		t.Fatalf("concurrent calls: %v", err)
	}
	wantAnnotations(t, a, ann("p1.example.com/seen", "p2", "p2.example.com/seen", "p1"))

	s.handle("/fast", deny(&metav1.Status{Message: "fast", Code: 403}))
	s.handle("/slow", func(w http.ResponseWriter, r *http.Request, in *reviewIn) {
		time.Sleep(300 * time.Millisecond)
		respond(w, in, admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "slow", Code: 403},
			AuditAnnotations: map[string]string{"late": "yes"}})
	})
	s.handle("/allow", allow)
	p.configure(validating, s, v1hook("slow.example.com", "/slow"), v1hook("allow.example.com", "/allow"), v1hook("fast.example.com", "/fast"))
	for i := 0; i < 3; i++ {
		a := cmUpdate(nil)
		start := time.Now()
		err := p.validating.Validate(context.Background(), a)
		wantStatus(t, err, 403, "", `admission webhook "fast.example.com" denied the request: fast`)
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("returned after %v, before the slow webhook answered", d)
		}
		wantAnnotations(t, a, ann("slow.example.com/late", "yes", "allow.example.com/key1", "value1"))
	}
}

// TestSideEffectsDryRun checks sideEffects against dryRun for both plugins,
// as callAttrMutatingHook and callHook do (k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go,
// validating/dispatcher.go).
func TestSideEffectsDryRun(t *testing.T) {
	s := newWebhookServer(t, true)
	s.handle("/noop", noop)
	classes := []*admissionregistrationv1.SideEffectClass{
		ptr(admissionregistrationv1.SideEffectClassNone), ptr(admissionregistrationv1.SideEffectClassNoneOnDryRun),
		ptr(admissionregistrationv1.SideEffectClassUnknown), ptr(admissionregistrationv1.SideEffectClassSome), nil,
	}
	for _, k := range []kind{validating, mutating} {
		for _, se := range classes {
			for _, dryRun := range []bool{false, true} {
				name := fmt.Sprintf("%s/%v/dryRun=%t", k, deref(se), dryRun)
				p := newPlugins(t, s.addr())
				h := v1hook("se.example.com", "/noop", policy(fail))
				if se == nil {
					h.noSideEffects = true
				} else {
					h.sideEffects = se
				}
				p.configure(k, s, h)
				before := len(s.callsTo("/noop"))
				a := cmUpdate(nil)
				a.DryRun = dryRun
				err := p.run(context.Background(), k, a)
				calls := s.callsTo("/noop")[before:]
				safe := se != nil && (*se == admissionregistrationv1.SideEffectClassNone || *se == admissionregistrationv1.SideEffectClassNoneOnDryRun)
				switch {
				case !dryRun || safe:
					if err != nil || len(calls) != 1 {
						t.Errorf("%s: error %v, %d calls; want admitted after 1 call", name, err, len(calls))
					} else if got := *calls[0].Review.Request.DryRun; got != dryRun {
						t.Errorf("%s: request.dryRun = %t, want %t", name, got, dryRun)
					}
				case se == nil:
					if len(calls) != 0 {
						t.Errorf("%s: %d calls, want none", name, len(calls))
					}
					wantInternal(t, err, `failed calling webhook "se.example.com": Webhook SideEffects is nil`)
				default:
					if len(calls) != 0 {
						t.Errorf("%s: %d calls, want none", name, len(calls))
					}
					wantStatus(t, err, 400, metav1.StatusReasonBadRequest, `admission webhook "se.example.com" does not support dry run`)
				}
			}
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return "nil"
	}
	return *p
}

// TestClientCache is upstream's NewCachedClientTestcases
// (k8s.io/apiserver/pkg/admission/plugin/webhook/testing/testcase.go; the cache is ClientManager in
// k8s.io/apiserver/pkg/util/webhook/client.go) observed from the server: a client is
// built per distinct client configuration (url, caBundle, service; not the
// webhook name) and its connections are kept alive and reused.
func TestClientCache(t *testing.T) {
	s := newWebhookServer(t, true)
	scriptUpstreamEndpoints(s)
	p := newPlugins(t, s.addr())
	steps := []struct {
		hook     hook
		newConns int64
	}{
		{wh("a", "/allow", policy(ignore)), 1},
		{wh("b", "/internalErr", policy(ignore)), 1},
		{wh("c", "/allow", policy(ignore)), 0},
		{wh("d", "/allow", policy(ignore), viaURL), 1},
		{wh("e", "/allow", policy(ignore), viaURL), 0},
	}
	for i, st := range steps {
		p.configure(validating, s, st.hook)
		before := s.conns.Load()
		if err := p.validating.Validate(context.Background(), cmUpdate(nil)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := s.conns.Load() - before; got != st.newConns {
			t.Errorf("step %d (%s %s): %d new connections, want %d", i, st.hook.name, st.hook.path, got, st.newConns)
		}
	}
	// Two webhooks with the same client configuration share a client.
	p = newPlugins(t, s.addr())
	p.configure(mutating, s, wh("x", "/noop"), wh("y", "/noop"))
	before := s.conns.Load()
	for i := 0; i < 3; i++ {
		if err := p.mutating.Admit(context.Background(), cmUpdate(nil)); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.conns.Load() - before; got != 1 {
		t.Errorf("6 calls to two webhooks with one client configuration opened %d connections, want 1", got)
	}
}

// TestPanicInResolver is upstream's NewNonMutatingPanicTestCases
// (k8s.io/apiserver/pkg/admission/plugin/webhook/testing/testcase.go): a panic while calling a validating
// webhook (upstream: in the credential resolver) is recovered and becomes a
// 500 "ValidatingAdmissionWebhook/<name> has panicked: <value>" (or fails
// open under Ignore). Here the ServiceResolver panics. It runs in a child
// process because an unrecovered panic would end the whole test binary.
func TestPanicInResolver(t *testing.T) {
	if os.Getenv("ADMITD_PANIC_CHILD") == "1" {
		panicChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPanicInResolver$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ADMITD_PANIC_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, tail(string(out), 40))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

type panickingResolver struct{}

func (panickingResolver) ResolveService(_, _ string, _ int32) (string, error) {
	panic("Start panicking!")
}

func panicChild(t *testing.T) {
	s := newWebhookServer(t, false)
	s.handle("/allow", allow)
	for _, pol := range []*admissionregistrationv1.FailurePolicyType{nil, ignore} {
		src := &swapSource{}
		src.set(nil, []*admissionregistrationv1.ValidatingWebhookConfiguration{
			validatingConfig(cfgName, s, wh("allow.example.com", "/allow", policy(pol)))})
		r := admission.NewRegistry()
		webhooks.Register(r, webhooks.Options{Source: src, Resolver: panickingResolver{}, CEL: sharedCEL()})
		chain, err := r.NewChain([]string{webhooks.ValidatingName}, admission.PluginContext{Namespaces: newNamespaces(webhookTestNS), Schema: testSchema{}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		a := cmUpdate(nil)
		err = chain.Validate(context.Background(), a)
		if pol == nil {
			wantInternal(t, err, "ValidatingAdmissionWebhook/allow.example.com has panicked: Start panicking!")
			wantAnnotations(t, a, nil)
		} else {
			if err != nil {
				t.Fatalf("Ignore: %v", err)
			}
			wantAnnotations(t, a, ann("failed-open.validating.webhook.admission.k8s.io/round_0_index_0", "allow.example.com"))
		}
	}
}
