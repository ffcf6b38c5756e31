package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
	"github.com/admitd/admitd/pkg/admission/webhooks"
)

// ---- the served kinds: ConfigMaps, Namespaces, and widgets.example.com in
// versions v1 and v1beta1 (a custom resource: unstructured, converted by
// changing apiVersion, as a CRD with conversion strategy None).

var (
	cmGVR            = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cmGVK            = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	nsGVR            = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	nsGVK            = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	widgetV1GVR      = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	widgetV1beta1GVR = schema.GroupVersionResource{Group: "example.com", Version: "v1beta1", Resource: "widgets"}
	widgetV1GVK      = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	widgetV1beta1GVK = schema.GroupVersionKind{Group: "example.com", Version: "v1beta1", Kind: "Widget"}
)

// testSchema is an honest admission.Schema for the kinds above. Defaulting:
// a Widget without spec.size gets size 1 (so re-defaulting after a patch is
// observable).
type testSchema struct{}

var _ admission.Schema = testSchema{}

func (testSchema) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	switch gvk {
	case cmGVK:
		return &corev1.ConfigMap{}, nil
	case nsGVK:
		return &corev1.Namespace{}, nil
	case widgetV1GVK, widgetV1beta1GVK:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u, nil
	}
	return nil, fmt.Errorf("no kind %q is registered for version %q in scheme %q", gvk.Kind, gvk.GroupVersion().String(), "pkg/runtime/scheme.go:111")
}

func (testSchema) ConvertTo(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	from := obj.GetObjectKind().GroupVersionKind()
	if from == gvk {
		return obj, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok && from.GroupKind() == gvk.GroupKind() {
		out := u.DeepCopy()
		out.SetGroupVersionKind(gvk)
		return out, nil
	}
	return nil, fmt.Errorf("converting (%s) to (%s): unknown conversion", from, gvk)
}

func (testSchema) Default(obj runtime.Object) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GroupVersionKind().GroupKind() != widgetV1GVK.GroupKind() {
		return
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "size"); !found {
		_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "size")
	}
}

func (testSchema) EquivalentResourcesFor(gvr schema.GroupVersionResource, sub string) []schema.GroupVersionResource {
	switch gvr {
	case widgetV1GVR, widgetV1beta1GVR:
		if sub != "" && sub != "status" {
			return nil
		}
		return []schema.GroupVersionResource{widgetV1GVR, widgetV1beta1GVR}
	case cmGVR, nsGVR:
		if sub != "" {
			return nil
		}
		return []schema.GroupVersionResource{gvr}
	}
	return nil
}

func (testSchema) KindFor(gvr schema.GroupVersionResource, sub string) schema.GroupVersionKind {
	switch {
	case gvr == cmGVR && sub == "":
		return cmGVK
	case gvr == nsGVR && sub == "":
		return nsGVK
	case gvr == widgetV1GVR && (sub == "" || sub == "status"):
		return widgetV1GVK
	case gvr == widgetV1beta1GVR && (sub == "" || sub == "status"):
		return widgetV1beta1GVK
	}
	return schema.GroupVersionKind{}
}

// namespaces is an in-memory admission.NamespaceLookup that counts reads.
type namespaces struct {
	byName map[string]*corev1.Namespace
	reads  atomic.Int64
}

func newNamespaces(nss ...*corev1.Namespace) *namespaces {
	n := &namespaces{byName: map[string]*corev1.Namespace{}}
	for _, ns := range nss {
		n.byName[ns.Name] = ns
	}
	return n
}

func (n *namespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	n.reads.Add(1)
	ns, ok := n.byName[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
	}
	return ns, nil
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// swapSource is a webhooks.Source whose snapshot a test replaces.
type swapSource struct {
	p atomic.Pointer[webhooks.Snapshot]
}

func (s *swapSource) Current() *webhooks.Snapshot { return s.p.Load() }

func (s *swapSource) set(m []*admissionregistrationv1.MutatingWebhookConfiguration, v []*admissionregistrationv1.ValidatingWebhookConfiguration) {
	s.p.Store(webhooks.NewSnapshot(m, v))
}

// resolver sends every service to one address.
type resolver struct{ addr string }

func (r resolver) ResolveService(_, _ string, _ int32) (string, error) { return r.addr, nil }

// ---- plugins

var (
	celOnce sync.Once
	celComp *admcel.Compiler
)

func sharedCEL() *admcel.Compiler {
	celOnce.Do(func() { celComp = admcel.NewCompiler(admcel.Options{}) })
	return celComp
}

// plugins are the two webhook plugins as the registry builds them.
type plugins struct {
	src        *swapSource
	mutating   admission.Mutator
	validating admission.Validator
	ns         *namespaces
	reg        *prometheus.Registry
}

// webhookTestNS is upstream's harness namespace.
var webhookTestNS = namespace("webhook-test", map[string]string{"runlevel": "0"})

// newPlugins registers the webhook plugins in a fresh registry and builds
// them with the test namespaces and schema; services resolve to addr.
func newPlugins(t testing.TB, addr string, nss ...*corev1.Namespace) *plugins {
	t.Helper()
	if len(nss) == 0 {
		nss = []*corev1.Namespace{webhookTestNS}
	}
	p := &plugins{src: &swapSource{}, ns: newNamespaces(nss...), reg: prometheus.NewRegistry()}
	p.src.set(nil, nil)
	r := admission.NewRegistry()
	webhooks.Register(r, webhooks.Options{
		Source: p.src, Resolver: resolver{addr}, CEL: sharedCEL(),
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Metrics: admission.NewMetrics(p.reg),
	})
	chain, err := r.NewChain([]string{webhooks.MutatingName, webhooks.ValidatingName},
		admission.PluginContext{Namespaces: p.ns, Schema: testSchema{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ps := chain.Plugins()
	p.mutating = ps[0].Plugin.(admission.Mutator)
	p.validating = ps[1].Plugin.(admission.Validator)
	return p
}

// metric returns the value of the counter name with exactly the given
// labels, or 0.
func (p *plugins) metric(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := p.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue next
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// ---- webhook configurations

const cfgName = "test-webhooks"

// hook describes one webhook; it becomes a mutating or validating webhook
// with upstream's harness defaults (match everything, selectors {},
// sideEffects None, v1 reviews, service webhook-test/default).
type hook struct {
	name, path                        string
	url                               bool   // URL form (https://127.0.0.1:port/path) instead of service
	service                           string // service name, default webhook-test
	noCA, otherCA, badCA, emptyClient bool
	failurePolicy                     *admissionregistrationv1.FailurePolicyType
	matchPolicy                       *admissionregistrationv1.MatchPolicyType
	sideEffects                       *admissionregistrationv1.SideEffectClass
	noSideEffects                     bool
	rules                             []admissionregistrationv1.RuleWithOperations
	namespaceSelector, objectSelector *metav1.LabelSelector
	timeout                           *int32
	versions                          []string
	reinvocation                      *admissionregistrationv1.ReinvocationPolicyType
	matchConditions                   []admissionregistrationv1.MatchCondition
}

func ptr[T any](v T) *T { return &v }

var (
	fail   = ptr(admissionregistrationv1.Fail)
	ignore = ptr(admissionregistrationv1.Ignore)
)

var matchEverything = []admissionregistrationv1.RuleWithOperations{{
	Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
	Rule:       admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*/*"}},
}}

func (h hook) clientConfig(s *webhookServer) admissionregistrationv1.WebhookClientConfig {
	main, other := cas()
	var cc admissionregistrationv1.WebhookClientConfig
	switch {
	case h.emptyClient:
		return cc
	case h.url:
		cc.URL = ptr(s.URL + h.path)
	default:
		name := h.service
		if name == "" {
			name = "webhook-test"
		}
		cc.Service = &admissionregistrationv1.ServiceReference{Namespace: "default", Name: name, Path: ptr(h.path)}
	}
	switch {
	case h.noCA:
	case h.otherCA:
		cc.CABundle = other.pem
	case h.badCA:
		cc.CABundle = []byte("not a certificate")
	default:
		cc.CABundle = main.pem
	}
	return cc
}

func (h hook) common(s *webhookServer) admissionregistrationv1.ValidatingWebhook {
	w := admissionregistrationv1.ValidatingWebhook{
		Name: h.name, ClientConfig: h.clientConfig(s), Rules: h.rules, FailurePolicy: h.failurePolicy,
		MatchPolicy: h.matchPolicy, NamespaceSelector: h.namespaceSelector, ObjectSelector: h.objectSelector,
		SideEffects: h.sideEffects, TimeoutSeconds: h.timeout, AdmissionReviewVersions: h.versions,
		MatchConditions: h.matchConditions,
	}
	if w.Rules == nil {
		w.Rules = matchEverything
	}
	if w.NamespaceSelector == nil {
		w.NamespaceSelector = &metav1.LabelSelector{}
	}
	if w.ObjectSelector == nil {
		w.ObjectSelector = &metav1.LabelSelector{}
	}
	if w.SideEffects == nil && !h.noSideEffects {
		w.SideEffects = ptr(admissionregistrationv1.SideEffectClassNone)
	}
	if w.AdmissionReviewVersions == nil {
		w.AdmissionReviewVersions = []string{"v1"}
	}
	return w
}

func validatingConfig(name string, s *webhookServer, hooks ...hook) *admissionregistrationv1.ValidatingWebhookConfiguration {
	c := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, h := range hooks {
		c.Webhooks = append(c.Webhooks, h.common(s))
	}
	return c
}

func mutatingConfig(name string, s *webhookServer, hooks ...hook) *admissionregistrationv1.MutatingWebhookConfiguration {
	c := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, h := range hooks {
		v := h.common(s)
		c.Webhooks = append(c.Webhooks, admissionregistrationv1.MutatingWebhook{
			Name: v.Name, ClientConfig: v.ClientConfig, Rules: v.Rules, FailurePolicy: v.FailurePolicy,
			MatchPolicy: v.MatchPolicy, NamespaceSelector: v.NamespaceSelector, ObjectSelector: v.ObjectSelector,
			SideEffects: v.SideEffects, TimeoutSeconds: v.TimeoutSeconds, AdmissionReviewVersions: v.AdmissionReviewVersions,
			MatchConditions: v.MatchConditions, ReinvocationPolicy: h.reinvocation,
		})
	}
	return c
}

// kind is the plugin a case runs through.
type kind string

const (
	mutating   kind = "mutating"
	validating kind = "validating"
)

// configure installs hooks as the only configuration (test-webhooks) of k.
func (p *plugins) configure(k kind, s *webhookServer, hooks ...hook) {
	if k == mutating {
		p.src.set([]*admissionregistrationv1.MutatingWebhookConfiguration{mutatingConfig(cfgName, s, hooks...)}, nil)
		return
	}
	p.src.set(nil, []*admissionregistrationv1.ValidatingWebhookConfiguration{validatingConfig(cfgName, s, hooks...)})
}

// run sends a through the plugin of kind k.
func (p *plugins) run(ctx context.Context, k kind, a *admission.Attributes) error {
	if k == mutating {
		return p.mutating.Admit(ctx, a)
	}
	return p.validating.Validate(ctx, a)
}

// ---- requests (upstream harness, with a ConfigMap instead of a Pod)

var testUser = authenticationv1.UserInfo{Username: "webhook-test", UID: "webhook-test"}

func withLabels(base map[string]string, extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func configMap(name, ns string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Data:       map[string]string{"key": "value"}}
}

func updateOptions() *metav1.UpdateOptions {
	return &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}}
}

// cmUpdate is the harness request: UPDATE of ConfigMap my-cm in
// webhook-test, labels {cm.name: my-cm} plus extra, old object unlabelled.
func cmUpdate(extra map[string]string) *admission.Attributes {
	return &admission.Attributes{
		Name: "my-cm", Namespace: "webhook-test", Resource: cmGVR, Kind: cmGVK, Operation: admission.Update,
		Options: updateOptions(), UserInfo: testUser,
		Object:    configMap("my-cm", "webhook-test", withLabels(map[string]string{"cm.name": "my-cm"}, extra)),
		OldObject: configMap("my-cm", "webhook-test", nil),
		Record:    admission.NewRecord(),
	}
}

func widget(gvk schema.GroupVersionKind, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(3)}}}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	u.SetNamespace("webhook-test")
	if labels != nil {
		u.SetLabels(labels)
	}
	return u
}

// widgetUpdate is the harness's "CRD" request: UPDATE of example.com/v1
// Widget my-widget, labels {widget.name: my-widget} plus extra.
func widgetUpdate(extra map[string]string) *admission.Attributes {
	return &admission.Attributes{
		Name: "my-widget", Namespace: "webhook-test", Resource: widgetV1GVR, Kind: widgetV1GVK, Operation: admission.Update,
		Options: updateOptions(), UserInfo: testUser,
		Object:    widget(widgetV1GVK, "my-widget", withLabels(map[string]string{"widget.name": "my-widget"}, extra)),
		OldObject: widget(widgetV1GVK, "my-widget", nil),
		Record:    admission.NewRecord(),
	}
}

// ---- assertions

// wantStatus checks that err is a StatusError with the given code, reason
// and message.
func wantStatus(t testing.TB, err error, code int32, reason metav1.StatusReason, message string) *apierrors.StatusError {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v (%T), want a StatusError %d %s %q", err, err, code, reason, message)
	}
	st := se.ErrStatus
	if st.Code != code || st.Reason != reason || st.Message != message || st.Status != metav1.StatusFailure {
		t.Fatalf("status = %d %s %s %q, want %d %s Failure %q", st.Code, st.Reason, st.Status, st.Message, code, reason, message)
	}
	return se
}

// wantInternal checks the 500 a call failure under Fail gives the client:
// message "Internal error occurred: <cause>", details.causes[0] = cause.
func wantInternal(t testing.TB, err error, cause string) {
	t.Helper()
	se := wantStatus(t, err, 500, metav1.StatusReasonInternalError, "Internal error occurred: "+cause)
	if d := se.ErrStatus.Details; d == nil || len(d.Causes) != 1 || d.Causes[0].Message != cause {
		t.Fatalf("details = %+v, want one cause %q", d, cause)
	}
}

// annotations returns every annotation of the request at any level.
func annotations(a *admission.Attributes) map[string]string {
	out := map[string]string{}
	for _, an := range a.Record.Annotations(admission.LevelRequestResponse) {
		out[an.Key] = an.Value
	}
	return out
}

func wantAnnotations(t testing.TB, a *admission.Attributes, want map[string]string) {
	t.Helper()
	got := annotations(a)
	if want == nil {
		want = map[string]string{}
	}
	if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) {
		t.Fatalf("annotations =\n%s\nwant\n%s", strings.Join(sorted(got), "\n"), strings.Join(sorted(want), "\n"))
	}
}

func sorted(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return out
}

func mutationAnnotation(round, index int, webhook string, mutated bool) (string, string) {
	return fmt.Sprintf("mutation.webhook.admission.k8s.io/round_%d_index_%d", round, index),
		fmt.Sprintf(`{"configuration":%q,"webhook":%q,"mutated":%t}`, cfgName, webhook, mutated)
}

func patchAnnotation(round, index int, webhook, patch string) (string, string) {
	return fmt.Sprintf("patch.webhook.admission.k8s.io/round_%d_index_%d", round, index),
		fmt.Sprintf(`{"configuration":%q,"webhook":%q,"patch":%s,"patchType":"JSONPatch"}`, cfgName, webhook, patch)
}

func labelsOf(t testing.TB, obj runtime.Object) map[string]string {
	t.Helper()
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return o.Labels
	case *unstructured.Unstructured:
		return o.GetLabels()
	}
	t.Fatalf("unexpected object %T", obj)
	return nil
}
