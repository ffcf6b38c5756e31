package testenv

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// Webhook is an HTTPS server for a webhook handler, on 127.0.0.1, with a
// certificate issued for 127.0.0.1 and localhost.
type Webhook struct {
	// URL is https://127.0.0.1:<port>; the handler serves every path.
	URL string
	// CABundle is the PEM certificate of the CA that issued the server's
	// certificate: the clientConfig.caBundle that trusts it.
	CABundle []byte

	srv *httptest.Server
}

// ServeWebhook serves h over HTTPS until the test ends.
func (e *Env) ServeWebhook(t testing.TB, h http.Handler) *Webhook {
	t.Helper()
	w, err := e.StartWebhook(h)
	if err != nil {
		t.Fatalf("starting a webhook server: %v", err)
	}
	t.Cleanup(w.Close)
	return w
}

// StartWebhook serves h over HTTPS until Close; ServeWebhook is the same
// for a test.
func (e *Env) StartWebhook(h http.Handler) (*Webhook, error) {
	ca, err := e.webhookCA()
	if err != nil {
		return nil, err
	}
	srv, err := webhooktest.NewUnstartedServer(ca, h)
	if err != nil {
		return nil, err
	}
	srv.StartTLS()
	return &Webhook{URL: srv.URL, CABundle: srv.CABundle(), srv: srv.Server}, nil
}

// Close stops the server, waiting for the requests in flight.
func (w *Webhook) Close() { w.srv.Close() }

// ClientConfig is how the API server reaches the webhook: its URL and
// CABundle.
func (w *Webhook) ClientConfig() admissionregistrationv1.WebhookClientConfig {
	url := w.URL + "/"
	return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: w.CABundle}
}

// Validating returns a configuration named name with one webhook of the
// same name (which must therefore be a domain of three or more labels, such
// as deny.example.com) calling w for requests that match rules, or every
// request when there are none. It sets the fields the API requires
// (sideEffects None, admissionReviewVersions v1) and leaves the others to
// the server's defaults: failurePolicy Fail, a 10s timeout, no selectors.
// Change it before creating it to set more.
func (w *Webhook) Validating(name string, rules ...admissionregistrationv1.RuleWithOperations) *admissionregistrationv1.ValidatingWebhookConfiguration {
	none := admissionregistrationv1.SideEffectClassNone
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: name, ClientConfig: w.ClientConfig(), Rules: rulesOrAll(rules),
			SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// Mutating is Validating for a mutating webhook (reinvocationPolicy Never
// by default).
func (w *Webhook) Mutating(name string, rules ...admissionregistrationv1.RuleWithOperations) *admissionregistrationv1.MutatingWebhookConfiguration {
	none := admissionregistrationv1.SideEffectClassNone
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: name, ClientConfig: w.ClientConfig(), Rules: rulesOrAll(rules),
			SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

func rulesOrAll(rules []admissionregistrationv1.RuleWithOperations) []admissionregistrationv1.RuleWithOperations {
	if len(rules) == 0 {
		return []admissionregistrationv1.RuleWithOperations{Rule("*")}
	}
	return rules
}

// Rule matches operations (all when none are given) on resource, in all
// versions. resource is written as for kubectl: "configmaps" (core group),
// "deployments.apps", with a subresource "pods/exec" or
// "deployments.apps/scale"; "*" is every resource of every group.
func Rule(resource string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.RuleWithOperations {
	if len(ops) == 0 {
		ops = []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	}
	name, sub, hasSub := strings.Cut(resource, "/")
	name, group, _ := strings.Cut(name, ".")
	if name == "*" && group == "" {
		group = "*"
	}
	if hasSub {
		name += "/" + sub
	}
	return admissionregistrationv1.RuleWithOperations{
		Operations: ops,
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{name},
		},
	}
}

// RegisterValidating creates w.Validating(name, rules...) through the API,
// so that it is in effect when RegisterValidating returns, and deletes it
// when the test ends. It returns the configuration as created.
func (e *Env) RegisterValidating(t testing.TB, name string, w *Webhook, rules ...admissionregistrationv1.RuleWithOperations) *admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	api := e.Client().AdmissionregistrationV1().ValidatingWebhookConfigurations()
	cfg, err := api.Create(context.Background(), w.Validating(name, rules...), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("registering validating webhook %s: %v", name, err)
	}
	t.Cleanup(func() { e.unregister(t, name, api.Delete) })
	return cfg
}

// RegisterMutating is RegisterValidating for a mutating webhook.
func (e *Env) RegisterMutating(t testing.TB, name string, w *Webhook, rules ...admissionregistrationv1.RuleWithOperations) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	api := e.Client().AdmissionregistrationV1().MutatingWebhookConfigurations()
	cfg, err := api.Create(context.Background(), w.Mutating(name, rules...), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("registering mutating webhook %s: %v", name, err)
	}
	t.Cleanup(func() { e.unregister(t, name, api.Delete) })
	return cfg
}

// unregister deletes a configuration at the end of the test that created
// it, so an environment shared by several tests does not keep calling
// webhooks that are gone. An environment already stopped has nothing to
// delete.
func (e *Env) unregister(t testing.TB, name string, del func(context.Context, string, metav1.DeleteOptions) error) {
	select {
	case <-e.srv.Done():
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := del(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Logf("unregistering webhook %s: %v", name, err)
	}
}
