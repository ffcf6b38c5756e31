// Package browser tests admitd's dashboard in a real headless Chromium:
// the built admitd, opened through `kubectl proxy` as a person would, with
// a webhook served by the test and a ValidatingAdmissionPolicy.
package browser

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// artifactsDir is where screenshots go: $ADMITD_BROWSER_ARTIFACTS, else a
// directory of the test's own.
func artifactsDir(t *testing.T) string {
	dir := os.Getenv("ADMITD_BROWSER_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDashboardInChromium opens the dashboard in headless Chromium and
// checks what a person sees: the webhooks and the policy listed with a
// lint finding, a configmap created meanwhile arriving as a live row, its
// trace tree on a click, the webhook's latency row, and (admitd runs with
// --background-audit) a stored configmap an Audit binding fails in the
// compliance view.
func TestDashboardInChromium(t *testing.T) {
	chromium, err := findChromium()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v: CI must run the browser test (.ci/run runs .ci/install-chromium)", err)
		}
		t.Skipf("%v: run .ci/install-chromium (Debian's chromium), or set CHROMIUM", err)
	}
	ctx := withTimeout(t, context.Background(), 90*time.Second)
	a := startAdmitd(t, "--background-audit")
	client := kubernetes.NewForConfigOrDie(a.restConfig(t))
	configure(t, ctx, client, serveWebhook(t))
	base := openURL(t, a)
	shots := artifactsDir(t)
	t.Logf("screenshots in %s", shots)

	browser := newBrowser(t, ctx, chromium)
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	run(t, browser, shots, "01-loaded.png",
		chromedp.Navigate(base+"/dashboard"), // the redirect to dashboard/
		chromedp.WaitVisible(css(`#status.live`)),
		chromedp.WaitVisible(css(`[data-config="shop-checks"] [data-webhook="check.dashboard.test"]`)),
		chromedp.WaitVisible(css(`[data-config="risky-everything"] .badge.sev-error`)),
		chromedp.WaitVisible(css(`[data-policy="no-forbidden-key"]`)),
		// the policy's dry-run denial in configure, from the kept traces
		chromedp.WaitVisible(`//table[@id="decisions"]//tr[td[normalize-space()="shop/bad"]]/td[normalize-space()="Denied"]`),
	)
	findings := text(t, browser, css(`#finding-table`))
	if !strings.Contains(findings, "AL006") || !strings.Contains(findings, "everything.dashboard.test") {
		t.Errorf("lint findings shown:\n%s\nwant AL006 for everything.dashboard.test", findings)
	}

	live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "live-1"}, Data: map[string]string{"k": "v"}}
	if _, err := client.CoreV1().ConfigMaps("shop").Create(ctx, live, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// an XPath search; the class "new" marks a row that came by the event stream
	row := `//table[@id="decisions"]//tr[contains(concat(" ", @class, " "), " new ")][td[normalize-space()="shop/live-1"]]`
	run(t, browser, shots, "02-live.png", chromedp.WaitVisible(row))

	run(t, browser, shots, "03-trace.png",
		chromedp.Click(row),
		chromedp.WaitVisible(css(`#trace-tree[data-audit-id]`)),
	)
	traceText := text(t, browser, css(`#trace-tree`))
	for _, want := range []string{"CREATE configmaps shop/live-1", "decision: Allowed", "NamespaceLifecycle: admitted",
		"check.dashboard.test (shop-checks): admitted", "no-forbidden-key (no-forbidden-key-binding): admitted"} {
		if !strings.Contains(traceText, want) {
			t.Errorf("trace tree lacks %q:\n%s", want, traceText)
		}
	}

	run(t, browser, shots, "04-latency.png",
		chromedp.Click(css(`#trace-close`)),
		chromedp.WaitVisible(`//table[@id="stats"]//td[normalize-space()="check.dashboard.test"]`),
		chromedp.ScrollIntoView(css(`#latency`)),
		chromedp.WaitVisible(css(`#status.live`)), // the stream never broke
	)

	auditStoredConfigMaps(t, ctx, client)
	violation := `//table[@id="compliance-table"]//tr[td[normalize-space()="no-forbidden-key-audit"]][td[normalize-space()="ConfigMap plain/legacy"]]`
	run(t, browser, shots, "05-compliance.png",
		chromedp.ScrollIntoView(css(`#compliance`)),
		chromedp.WaitVisible(violation),
	)
	if got := text(t, browser, css(`#compliance-table`)); !strings.Contains(got, "the key forbidden is forbidden") || strings.Contains(got, "live-1") {
		t.Errorf("compliance table:\n%s\nwant plain/legacy's message, and not the compliant shop/live-1", got)
	}
	if t.Failed() {
		t.Logf("admitd stderr:\n%s", a.stderr)
	}
}

// run runs steps in the browser, then saves a screenshot named name.
func run(t *testing.T, browser context.Context, dir, name string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	step, cancel := context.WithTimeout(browser, 30*time.Second)
	defer cancel()
	err := chromedp.Do(step, steps...)
	path := filepath.Join(dir, name)
	if png, serr := chromedp.Run(browser, chromedp.FullScreenshot(100)); serr == nil {
		_ = os.WriteFile(path, png, 0o644)
	}
	if err != nil {
		t.Fatalf("%s: %v (screenshot %s)", strings.TrimSuffix(name, ".png"), err, path)
	}
}

// text is the text of the element sel selects.
func text(t *testing.T, browser context.Context, sel chromedp.CSS) string {
	t.Helper()
	s, err := chromedp.Run(browser, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("reading the text of %s: %v", sel, err)
	}
	return s
}

// newBrowser starts headless Chromium with the flags that keep it off the
// network and out of the user's profile.
func newBrowser(t *testing.T, ctx context.Context, chromium string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browser, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return browser
}

// openURL is where the browser opens the server: `kubectl proxy` with the
// admin kubeconfig, or without a kubectl on PATH a proxy in the test that
// does the same (the kubeconfig's client certificate, streaming).
func openURL(t *testing.T, a *admitd) string {
	t.Helper()
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		t.Logf("opening the dashboard through %s proxy", kubectl)
		return kubectlProxy(t, kubectl, a.Kubeconfig)
	}
	t.Log("no kubectl on PATH: opening the dashboard through a proxy in the test")
	cfg := a.restConfig(t)
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport, proxy.FlushInterval = transport, -1
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

// serveWebhook serves a validating webhook that admits everything, over
// TLS on 127.0.0.1, and returns its URL and CA bundle.
func serveWebhook(t *testing.T) admissionregistrationv1.WebhookClientConfig {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(srv.Close)
	u := srv.URL + "/validate"
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: ca}
}

// configure creates namespace shop (label dashboard=on), the webhook
// configuration shop-checks (configmaps in such namespaces, our webhook),
// the policy no-forbidden-key with its binding, and risky-everything: Fail
// on every resource (a lint error), never called (its objectSelector
// matches nothing). It returns once the policy denies in shop.
func configure(t *testing.T, ctx context.Context, c kubernetes.Interface, hook admissionregistrationv1.WebhookClientConfig) {
	t.Helper()
	on := &metav1.LabelSelector{MatchLabels: map[string]string{"dashboard": "on"}}
	fail, none, timeout := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone, int32(5)
	configmaps := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
	everything := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}}}}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"dashboard": "on"}}}, metav1.CreateOptions{}))
	must(c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-checks"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "check.dashboard.test", ClientConfig: hook, Rules: configmaps,
			NamespaceSelector: on, FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{}))
	must(c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "no-forbidden-key"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: configmaps[0]}}},
			Validations:      []admissionregistrationv1.Validation{{Expression: `!has(object.data) || !('forbidden' in object.data)`, Message: "the key forbidden is forbidden"}},
		},
	}, metav1.CreateOptions{}))
	must(c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "no-forbidden-key-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "no-forbidden-key",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: on}},
	}, metav1.CreateOptions{}))
	must(c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "risky-everything"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "everything.dashboard.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr("https://127.0.0.1:1/")},
			Rules: everything, ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"dashboard.test/never": "true"}},
			FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{}))
	// the policy (and the webhook, loaded with it) are in force once a
	// forbidden key is denied; that denial is a row of the page too
	for i := 0; ; i++ {
		bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Data: map[string]string{"forbidden": "yes"}}
		_, err := c.CoreV1().ConfigMaps("shop").Create(ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "the key forbidden is forbidden") {
			return
		}
		if i == 100 {
			t.Fatalf("the policy did not deny within 10s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// auditStoredConfigMaps stores the ConfigMap plain/legacy with the
// forbidden key (namespace plain is outside the Deny binding's), then
// binds no-forbidden-key with Audit everywhere: the background audit
// finds it.
func auditStoredConfigMaps(t *testing.T, ctx context.Context, c kubernetes.Interface) {
	t.Helper()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	legacy := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}, Data: map[string]string{"forbidden": "yes"}}
	if _, err := c.CoreV1().ConfigMaps("plain").Create(ctx, legacy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "no-forbidden-key-audit"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "no-forbidden-key",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }
