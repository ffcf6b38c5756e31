package controllers

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/pki"
	"github.com/admitd/admitd/pkg/admission"
)

// CA injection, an admitd feature upstream does not have: a mutating or
// validating webhook configuration, or a CustomResourceDefinition with a
// conversion webhook, annotated
//
//	admitd.io/inject-ca-from: <namespace>/<secret-name>
//
// gets the caBundle of every one of its webhooks from that Secret's ca.crt
// (or, without one, tls.crt), so manifests need no generated data. It has
// two halves. CAInjection is a named mutating step of the API server's
// write path (apiserver.Config.WriteSteps): it runs after mutating
// admission, before validation and validating admission, which therefore
// see what is stored, and leaves a step in the request's trace. CARefresh
// is the controller that brings the configurations naming a Secret up to
// date when the Secret changes, by rewriting them through the API (where
// the step does the work). A configuration whose Secret is missing or
// unusable is stored as written, with a warning on the response; its
// caBundle is filled when the Secret appears. Deleting the Secret leaves
// the caBundles as they are.
//
// Only certificates are copied: anything else in the Secret's key (a private
// key put there by mistake) never reaches the world-readable configuration.

// InjectCAAnnotation asks for CA injection from the Secret it names.
const InjectCAAnnotation = "admitd.io/inject-ca-from"

// CAInjectionName is the name of the write step in traces and metrics.
const CAInjectionName = "CAInjection"

// The keys read from the Secret, in order of preference.
var caBundleKeys = []string{"ca.crt", "tls.crt"}

var (
	mutatingWebhooksGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations")
	validatingWebhooksGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
)

// customResourceDefinitionsGVR: CA injection also fills a definition's
// spec.conversion.webhook.clientConfig.caBundle.
var customResourceDefinitionsGVR = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// IsWebhookConfiguration reports whether gvr is one of the resources CA
// injection applies to: the two webhook configurations and
// CustomResourceDefinitions (their conversion webhook).
func IsWebhookConfiguration(gvr schema.GroupResource) bool {
	return gvr == mutatingWebhooksGVR.GroupResource() || gvr == validatingWebhooksGVR.GroupResource() ||
		gvr == customResourceDefinitionsGVR.GroupResource()
}

// caSource is the Secret a configuration takes its caBundle from.
type caSource struct{ namespace, name string }

func (c caSource) String() string { return c.namespace + "/" + c.name }

// caSourceOf reads InjectCAAnnotation; ok is false when it is absent.
func caSourceOf(obj runtime.Object) (src caSource, ok bool, err error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return caSource{}, false, nil
	}
	v, ok := m.GetAnnotations()[InjectCAAnnotation]
	if !ok {
		return caSource{}, false, nil
	}
	ns, name, found := strings.Cut(strings.TrimSpace(v), "/")
	if !found || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return caSource{}, true, fmt.Errorf("%q is not <namespace>/<secret-name>", v)
	}
	return caSource{namespace: ns, name: name}, true, nil
}

// CAInjection is the write step that fills the caBundles of a webhook
// configuration that asks for it, or warns why it could not.
type CAInjection struct {
	secrets *admissionsource.SecretLookup
	log     *slog.Logger
}

var _ admission.Mutator = (*CAInjection)(nil)

// NewCAInjection returns the step; secrets nil (Secrets not served) makes
// every injection a warning.
func NewCAInjection(secrets *admissionsource.SecretLookup, log *slog.Logger) *CAInjection {
	return &CAInjection{secrets: secrets, log: log}
}

// Handles reports CREATE and UPDATE.
func (c *CAInjection) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit injects into a.Object; it never fails the request.
func (c *CAInjection) Admit(ctx context.Context, a *admission.Attributes) error {
	if !IsWebhookConfiguration(a.Resource.GroupResource()) || a.Subresource != "" {
		return nil
	}
	src, ok, err := caSourceOf(a.Object)
	if !ok {
		return nil
	}
	start := time.Now()
	var bundle []byte
	if err == nil {
		bundle, err = c.bundleFrom(ctx, src)
	}
	step := admission.Step{Plugin: CAInjectionName, Matched: true}
	if err != nil {
		a.Record.AddWarning(InjectCAAnnotation + ": " + err.Error())
		step.Reason = err.Error()
	} else {
		step.Mutated = staleCA(a.Object, bundle)
		step.Reason = "caBundle from secret " + src.String()
		for _, cb := range caBundlesOf(a.Object) {
			*cb = bytes.Clone(bundle)
		}
	}
	step.Duration = time.Since(start)
	a.Record.AddStep(step)
	return nil
}

// bundleFrom returns the certificates of the Secret src, PEM encoded.
func (c *CAInjection) bundleFrom(ctx context.Context, src caSource) ([]byte, error) {
	if c.secrets == nil {
		return nil, fmt.Errorf("secrets are not served")
	}
	secret, err := c.secrets.GetSecret(ctx, src.namespace, src.name)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("secret %s not found", src)
	}
	if err != nil { // the cause is logged, not shown to the client
		c.log.Error("reading a Secret for CA injection", "secret", src.String(), "err", err)
		return nil, fmt.Errorf("secret %s could not be read", src)
	}
	for _, key := range caBundleKeys {
		if len(secret.Data[key]) == 0 {
			continue
		}
		certs, err := pki.ParseCertsPEM(secret.Data[key])
		if err != nil {
			return nil, fmt.Errorf("secret %s: %s: %w", src, key, err)
		}
		var bundle []byte
		for _, cert := range certs {
			bundle = append(bundle, pki.EncodeCertPEM(cert)...)
		}
		return bundle, nil
	}
	return nil, fmt.Errorf("secret %s has no %s", src, strings.Join(caBundleKeys, " or "))
}

// caBundlesOf returns the caBundle of every webhook of a webhook
// configuration, or of a definition's conversion webhook, to read or set
// in place.
func caBundlesOf(obj runtime.Object) []*[]byte {
	var out []*[]byte
	switch o := obj.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for i := range o.Webhooks {
			out = append(out, &o.Webhooks[i].ClientConfig.CABundle)
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for i := range o.Webhooks {
			out = append(out, &o.Webhooks[i].ClientConfig.CABundle)
		}
	case *apiextensionsv1.CustomResourceDefinition:
		if c := o.Spec.Conversion; c != nil && c.Webhook != nil && c.Webhook.ClientConfig != nil {
			out = append(out, &c.Webhook.ClientConfig.CABundle)
		}
	}
	return out
}

// staleCA reports whether a webhook of obj has a caBundle other than bundle.
func staleCA(obj runtime.Object, bundle []byte) bool {
	for _, cb := range caBundlesOf(obj) {
		if !bytes.Equal(*cb, bundle) {
			return true
		}
	}
	return false
}

// CAInjectorUser is the user of the updates that refresh caBundles after a
// Secret changes. It is the server's own, like kube-apiserver's loopback
// user, and as that one in system:masters: no RBAC role of the bootstrap
// policy covers it.
var CAInjectorUser = authenticationv1.UserInfo{Username: "system:admitd:ca-injector", Groups: []string{"system:masters", "system:authenticated"}}

const caInjectorManager = "admitd-ca-injector"
