package controllers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/pki"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage/memory"
)

const (
	vwcPath    = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
	mwcPath    = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
	secretPath = "/api/v1/namespaces/default/secrets"
)

func newCAPEM(t *testing.T) []byte {
	t.Helper()
	ca, err := pki.NewCA("webhook-ca")
	if err != nil {
		t.Fatal(err)
	}
	return ca.CertPEM
}

// secretJSON is a Secret in default with the given data.
func secretJSON(name string, data map[string][]byte) string {
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name}, "data": data})
	return string(b)
}

// webhookConfigJSON is a configuration of kind with two URL webhooks and
// the given annotation value ("" for none) and caBundle.
func webhookConfigJSON(kind, name, injectFrom string, caBundle []byte) string {
	meta := map[string]any{"name": name}
	if injectFrom != "" {
		meta["annotations"] = map[string]string{InjectCAAnnotation: injectFrom}
	}
	var hooks []map[string]any
	for _, h := range []string{"a.example.com", "b.example.com"} {
		cc := map[string]any{"url": "https://" + h + "/"}
		if caBundle != nil {
			cc["caBundle"] = caBundle
		}
		hooks = append(hooks, map[string]any{"name": h, "clientConfig": cc, "sideEffects": "None", "admissionReviewVersions": []string{"v1"}})
	}
	b, _ := json.Marshal(map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": meta, "webhooks": hooks})
	return string(b)
}

// caBundles returns the caBundle of every webhook in a response or GET.
func caBundles(t *testing.T, body []byte) [][]byte {
	t.Helper()
	var cfg admissionregistrationv1.ValidatingWebhookConfiguration // the fields read are common to both kinds
	if err := json.Unmarshal(body, &cfg); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	var out [][]byte
	for _, w := range cfg.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	return out
}

func wantBundles(t *testing.T, what string, got [][]byte, want []byte) {
	t.Helper()
	if len(got) != 2 {
		t.Fatalf("%s: %d webhooks, want 2", what, len(got))
	}
	for i, b := range got {
		if !bytes.Equal(b, want) {
			t.Errorf("%s: webhooks[%d].clientConfig.caBundle = %q, want %q", what, i, b, want)
		}
	}
}

func (c *cluster) send(code int, method, path, contentType, body string) *http.Response {
	c.t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	c.api.ServeHTTP(w, r)
	if w.Code != code {
		c.t.Fatalf("%s %s = %d %s, want %d", method, path, w.Code, w.Body.String(), code)
	}
	return w.Result()
}

func bodyOf(r *http.Response) []byte {
	var b bytes.Buffer
	_, _ = b.ReadFrom(r.Body)
	return b.Bytes()
}

func TestCAInjectionOnWrite(t *testing.T) {
	for _, tc := range []struct{ kind, path string }{
		{"ValidatingWebhookConfiguration", vwcPath},
		{"MutatingWebhookConfiguration", mwcPath},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			seen := &caSeer{}
			ts := newCluster(t, admission.NamedPlugin{Name: "seer", Plugin: seen})
			ca := newCAPEM(t)
			ts.send(201, "POST", secretPath, "application/json", secretJSON("hook-ca", map[string][]byte{"ca.crt": ca}))

			r := ts.send(201, "POST", tc.path, "application/json", webhookConfigJSON(tc.kind, "hook", "default/hook-ca", nil))
			if w := r.Header.Values("Warning"); len(w) > 0 {
				t.Errorf("create with a usable Secret warned %q", w)
			}
			created := bodyOf(r)
			wantBundles(t, "create", caBundles(t, created), ca)
			if got := seen.take(); len(got) != 1 || got[0] != "CREATE caBundle=true by system:anonymous" {
				t.Errorf("validating admission saw %q, want the injected caBundle on CREATE", got)
			}
			wantBundles(t, "get", caBundles(t, bodyOf(ts.send(200, "GET", tc.path+"/hook", "", ""))), ca)

			// A re-apply of the manifest, which has no caBundle, keeps it and
			// writes nothing.
			rv := accessorOf(t, created).GetResourceVersion()
			put := withResourceVersion(webhookConfigJSON(tc.kind, "hook", "default/hook-ca", nil), "hook", rv)
			updated := bodyOf(ts.send(200, "PUT", tc.path+"/hook", "application/json", put))
			wantBundles(t, "update without caBundle", caBundles(t, updated), ca)
			if got := accessorOf(t, updated).GetResourceVersion(); got != rv {
				t.Errorf("re-applying the manifest changed resourceVersion %v to %v, want a no-op", rv, got)
			}

			// Dry run shows the injection too.
			dry := bodyOf(ts.send(201, "POST", tc.path+"?dryRun=All", "application/json", webhookConfigJSON(tc.kind, "dry", "default/hook-ca", nil)))
			wantBundles(t, "dry-run create", caBundles(t, dry), ca)
		})
	}
}

func TestCAInjectionProblemsAreWarnings(t *testing.T) {
	ca := newCAPEM(t)
	key, _ := pki.NewCA("other")
	keyPEM, _ := key.KeyPEM()
	written := []byte("-----BEGIN CERTIFICATE-----\nd3JpdHRlbg==\n-----END CERTIFICATE-----\n")
	for _, tc := range []struct {
		name       string
		secret     map[string][]byte // nil: no Secret
		injectFrom string
		want       []byte // caBundle stored
		warning    string
	}{
		{name: "missing secret", injectFrom: "default/hook-ca", want: written,
			warning: "admitd.io/inject-ca-from: secret default/hook-ca not found"},
		{name: "not namespace/name", secret: map[string][]byte{"ca.crt": ca}, injectFrom: "hook-ca", want: written,
			warning: `admitd.io/inject-ca-from: "hook-ca" is not <namespace>/<secret-name>`},
		{name: "no usable key", secret: map[string][]byte{"tls.key": keyPEM}, injectFrom: "default/hook-ca", want: written,
			warning: "admitd.io/inject-ca-from: secret default/hook-ca has no ca.crt or tls.crt"},
		{name: "not PEM", secret: map[string][]byte{"ca.crt": []byte("garbage")}, injectFrom: "default/hook-ca", want: written,
			warning: "admitd.io/inject-ca-from: secret default/hook-ca: ca.crt: no PEM certificate found"},
		{name: "tls.crt fallback", secret: map[string][]byte{"tls.crt": ca, "tls.key": keyPEM}, injectFrom: "default/hook-ca", want: ca},
		{name: "only certificates are copied", secret: map[string][]byte{"ca.crt": append(append([]byte{}, keyPEM...), ca...)}, injectFrom: "default/hook-ca", want: ca},
		{name: "ca.crt preferred", secret: map[string][]byte{"ca.crt": ca, "tls.crt": newCAPEM(t)}, injectFrom: " default/hook-ca ", want: ca},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newCluster(t)
			if tc.secret != nil {
				ts.send(201, "POST", secretPath, "application/json", secretJSON("hook-ca", tc.secret))
			}
			r := ts.send(201, "POST", vwcPath, "application/json", webhookConfigJSON("ValidatingWebhookConfiguration", "hook", tc.injectFrom, written))
			wantBundles(t, "create", caBundles(t, bodyOf(r)), tc.want)
			var warning string
			if w := r.Header.Values("Warning"); len(w) > 0 {
				warning = strings.Join(w, "; ")
			}
			if want := warningHeader(tc.warning); warning != want {
				t.Errorf("Warning = %q, want %q", warning, want)
			}
		})
	}
}

func accessorOf(t *testing.T, body []byte) *metav1.ObjectMeta {
	t.Helper()
	var obj metav1.PartialObjectMetadata
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	return &obj.ObjectMeta
}

// withResourceVersion adds a resourceVersion to the JSON of an object.
func withResourceVersion(obj, name, rv string) string {
	return strings.Replace(obj, fmt.Sprintf(`"name":%q`, name), fmt.Sprintf(`"name":%q,"resourceVersion":%q`, name, rv), 1)
}

func warningHeader(text string) string {
	if text == "" {
		return ""
	}
	h, _ := utilnet.NewWarningHeader(299, "-", text)
	return h
}

func TestCAInjectionFollowsTheSecret(t *testing.T) {
	seen := &caSeer{}
	ts := newCluster(t, admission.NamedPlugin{Name: "seer", Plugin: seen})
	ts.send(201, "POST", vwcPath, "application/json", webhookConfigJSON("ValidatingWebhookConfiguration", "hook", "default/hook-ca", nil))
	ts.send(201, "POST", mwcPath, "application/json", webhookConfigJSON("MutatingWebhookConfiguration", "hook", "default/hook-ca", nil))
	ts.send(201, "POST", vwcPath, "application/json", webhookConfigJSON("ValidatingWebhookConfiguration", "other", "default/other-ca", nil))
	ts.send(201, "POST", vwcPath, "application/json", webhookConfigJSON("ValidatingWebhookConfiguration", "plain", "", []byte("plain")))
	seen.take()
	get := func(path string) [][]byte { return caBundles(t, bodyOf(ts.send(200, "GET", path, "", ""))) }

	// The Secret appears after the configurations.
	first := newCAPEM(t)
	ts.send(201, "POST", secretPath, "application/json", secretJSON("hook-ca", map[string][]byte{"ca.crt": first}))
	wantBundles(t, "validating after the Secret was created", get(vwcPath+"/hook"), first)
	wantBundles(t, "mutating after the Secret was created", get(mwcPath+"/hook"), first)
	wantBundles(t, "configuration naming another Secret", get(vwcPath+"/other"), nil)
	wantBundles(t, "configuration without the annotation", get(vwcPath+"/plain"), []byte("plain"))
	if got := seen.take(); len(got) != 2 || got[0] != "UPDATE caBundle=true by system:admitd:ca-injector" || got[1] != got[0] {
		t.Errorf("validating admission saw %q, want two updates by the injector", got)
	}

	// Rotation.
	second := newCAPEM(t)
	ts.send(200, "PATCH", secretPath+"/hook-ca", "application/merge-patch+json", fmt.Sprintf(`{"data":{"ca.crt":%q}}`, base64.StdEncoding.EncodeToString(second)))
	wantBundles(t, "after rotation", get(vwcPath+"/hook"), second)
	rv := accessorOf(t, bodyOf(ts.send(200, "GET", secretPath+"/hook-ca", "", ""))).GetResourceVersion()
	put := withResourceVersion(secretJSON("hook-ca", map[string][]byte{"ca.crt": first}), "hook-ca", rv)
	ts.send(200, "PUT", secretPath+"/hook-ca", "application/json", put)
	wantBundles(t, "after a PUT", get(mwcPath+"/hook"), first)
	seen.take()

	// An unrelated change of the Secret writes nothing.
	ts.send(200, "PATCH", secretPath+"/hook-ca", "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`)
	if got := seen.take(); len(got) != 0 {
		t.Errorf("a Secret change that keeps ca.crt caused %q, want no configuration update", got)
	}

	// Deleting the Secret keeps what was injected.
	ts.send(200, "DELETE", secretPath+"/hook-ca", "", "")
	wantBundles(t, "after the Secret was deleted", get(vwcPath+"/hook"), first)
}

// Secret writes and configuration writes racing end with the caBundle of
// the last Secret written.
func TestCAInjectionConverges(t *testing.T) {
	ts := newCluster(t)
	cas := [][]byte{newCAPEM(t), newCAPEM(t), newCAPEM(t)}
	ts.send(201, "POST", secretPath, "application/json", secretJSON("hook-ca", map[string][]byte{"ca.crt": cas[0]}))
	ts.send(201, "POST", vwcPath, "application/json", webhookConfigJSON("ValidatingWebhookConfiguration", "hook", "default/hook-ca", nil))
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 30 {
			patch := fmt.Sprintf(`{"data":{"ca.crt":%q}}`, base64.StdEncoding.EncodeToString(cas[i%len(cas)]))
			ts.send(200, "PATCH", secretPath+"/hook-ca", "application/merge-patch+json", patch)
		}
	})
	wg.Go(func() {
		for i := range 30 {
			patch := fmt.Sprintf(`{"metadata":{"labels":{"n":"%d"}},"webhooks":[{"name":"a.example.com","clientConfig":{"caBundle":null}}]}`, i)
			ts.send(200, "PATCH", vwcPath+"/hook", "application/strategic-merge-patch+json", patch)
		}
	})
	wg.Wait()
	want := cas[29%len(cas)]
	wantBundles(t, "after racing writes", caBundles(t, bodyOf(ts.send(200, "GET", vwcPath+"/hook", "", ""))), want)
}

// caSeer is a validating plugin that reports, for webhook configurations,
// whether the object it validates has every caBundle set, and who asks.
type caSeer struct {
	mu    sync.Mutex
	calls []string
}

func (c *caSeer) Handles(admission.Operation) bool { return true }

func (c *caSeer) Validate(_ context.Context, a *admission.Attributes) error {
	cbs := caBundlesOf(a.Object)
	if len(cbs) == 0 {
		return nil
	}
	set := true
	for _, cb := range cbs {
		set = set && len(*cb) > 0
	}
	call := fmt.Sprintf("%s caBundle=%v", a.Operation, set)
	if a.UserInfo.Username != "" {
		call += " by " + a.UserInfo.Username
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
	return nil
}

func (c *caSeer) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	return out
}

// CA injection leaves a step in the request's trace and is metered as an
// admission controller.
func TestCAInjectionTracedAndMetered(t *testing.T) {
	store, cat := memory.New(), registry.NewCatalogue()
	reg := prometheus.NewRegistry()
	var steps []admission.Step
	api := apiserver.New(apiserver.Config{Store: store, Catalogue: cat, AdmissionMetrics: admission.NewMetrics(reg),
		WriteSteps: []admission.NamedPlugin{{Name: CAInjectionName, Plugin: NewCAInjection(admissionsource.NewSecretLookup(store, cat), slog.Default())}},
		OnRequestDone: func(_ context.Context, ev *apiserver.RequestEvent) {
			if ev.Record != nil {
				steps = append(steps, ev.Record.Steps()...)
			}
		}})
	for _, req := range []struct{ path, body string }{
		{secretPath, secretJSON("hook-ca", map[string][]byte{"ca.crt": newCAPEM(t)})},
		{vwcPath, webhookConfigJSON("ValidatingWebhookConfiguration", "hook", "default/hook-ca", nil)},
	} {
		w := httptest.NewRecorder()
		api.ServeHTTP(w, httptest.NewRequest("POST", req.path, strings.NewReader(req.body)))
		if w.Code != http.StatusCreated {
			t.Fatalf("POST %s = %d %s, want 201", req.path, w.Code, w.Body.String())
		}
	}
	if n := testutil.CollectAndCount(reg, "apiserver_admission_controller_admission_duration_seconds"); n != 1 {
		t.Errorf("controller admission duration series = %d, want 1 (CAInjection, admit, CREATE)", n)
	}
	if len(steps) != 1 || steps[0].Plugin != CAInjectionName || !steps[0].Matched || !steps[0].Mutated || steps[0].Reason != "caBundle from secret default/hook-ca" {
		t.Errorf("trace = %+v, want one mutating CAInjection step", steps)
	}
}
