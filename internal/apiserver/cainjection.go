package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/admitd/admitd/internal/pki"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
)

// CA injection, an admitd feature upstream does not have: a mutating or
// validating webhook configuration annotated
//
//	admitd.io/inject-ca-from: <namespace>/<secret-name>
//
// gets the caBundle of every one of its webhooks from that Secret's ca.crt
// (or, without one, tls.crt), so manifests need no generated data. It is a
// step of the write path, not an admission plugin: it runs where upstream's
// PrepareForCreate/PrepareForUpdate do (after mutating admission, before
// validation and validating admission, which therefore see what is stored),
// and every write of a Secret brings the configurations that name it up to
// date. A configuration whose Secret is missing or unusable is stored as
// written, with a warning on the response; its caBundle is filled when the
// Secret appears. Deleting the Secret leaves the caBundles as they are.
//
// Only certificates are copied: anything else in the Secret's key (a private
// key put there by mistake) never reaches the world-readable configuration.

// InjectCAAnnotation asks for CA injection from the Secret it names.
const InjectCAAnnotation = "admitd.io/inject-ca-from"

// The keys read from the Secret, in order of preference.
var caBundleKeys = []string{"ca.crt", "tls.crt"}

// caInjector is the identity of the updates that refresh caBundles after a
// Secret changes: the user admission sees and the field manager.
var caInjector = authenticationv1.UserInfo{Username: "system:admitd:ca-injector", Groups: []string{"system:authenticated"}}

const caInjectorManager = "admitd-ca-injector"

var secretsGVR = corev1.SchemeGroupVersion.WithResource("secrets")

// caSource is the Secret a configuration takes its caBundle from.
type caSource struct{ namespace, name string }

func (c caSource) String() string { return c.namespace + "/" + c.name }

// caSourceOf reads InjectCAAnnotation; ok is false when it is absent.
func caSourceOf(m metav1.Object) (src caSource, ok bool, err error) {
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

// isWebhookConfig reports whether res is one of the two resources CA
// injection applies to.
func isWebhookConfig(res *registry.Resource) bool {
	return res.GroupVersionResource == mutatingWebhooksGVR || res.GroupVersionResource == validatingWebhooksGVR
}

// injectCA is the write-path step: it fills the caBundles of a webhook
// configuration that asks for it, or records why it could not.
func (s *Server) injectCA(ctx context.Context, rq *request, res *registry.Resource, obj runtime.Object) {
	if !isWebhookConfig(res) || rq.info.Subresource != "" {
		return
	}
	src, ok, err := caSourceOf(accessor(obj))
	if !ok {
		return
	}
	var bundle []byte
	if err == nil {
		bundle, err = s.caBundleFrom(ctx, src)
	}
	if err != nil {
		rq.record.AddWarning(InjectCAAnnotation + ": " + err.Error())
		return
	}
	for _, cc := range clientConfigs(obj) {
		cc.CABundle = bytes.Clone(bundle)
	}
}

// caBundleFrom returns the certificates of the Secret src, PEM encoded.
func (s *Server) caBundleFrom(ctx context.Context, src caSource) ([]byte, error) {
	res, ok := s.cat.Lookup(secretsGVR)
	if !ok {
		return nil, errors.New("secrets are not served")
	}
	kv, err := s.store.Get(ctx, layout.Key(res, src.namespace, src.name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("secret %s not found", src)
	}
	var obj runtime.Object
	if err == nil {
		obj, err = layout.Decode(res, kv)
	}
	if err != nil { // the cause is logged, not shown to the client
		s.log.Error("reading a Secret for CA injection", "secret", src.String(), "err", err)
		return nil, fmt.Errorf("secret %s could not be read", src)
	}
	data := obj.(*corev1.Secret).Data
	for _, key := range caBundleKeys {
		if len(data[key]) == 0 {
			continue
		}
		certs, err := pki.ParseCertsPEM(data[key])
		if err != nil {
			return nil, fmt.Errorf("secret %s: %s: %w", src, key, err)
		}
		var bundle []byte
		for _, c := range certs {
			bundle = append(bundle, pki.EncodeCertPEM(c)...)
		}
		return bundle, nil
	}
	return nil, fmt.Errorf("secret %s has no %s", src, strings.Join(caBundleKeys, " or "))
}

// clientConfigs returns the client configurations of every webhook of a
// webhook configuration, to read or set in place.
func clientConfigs(obj runtime.Object) []*admissionregistrationv1.WebhookClientConfig {
	var out []*admissionregistrationv1.WebhookClientConfig
	switch o := obj.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for i := range o.Webhooks {
			out = append(out, &o.Webhooks[i].ClientConfig)
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for i := range o.Webhooks {
			out = append(out, &o.Webhooks[i].ClientConfig)
		}
	}
	return out
}

// secretWritten refreshes the configurations that take their caBundle from
// the Secret just written and hold another one. A stored configuration is
// decoded only if its bytes mention the annotation. A Secret deleted or
// unusable changes nothing.
func (s *Server) secretWritten(ctx context.Context, secret metav1.Object) {
	src := caSource{namespace: secret.GetNamespace(), name: secret.GetName()}
	var bundle []byte
	for _, gvr := range []schema.GroupVersionResource{mutatingWebhooksGVR, validatingWebhooksGVR} {
		res, ok := s.cat.Lookup(gvr)
		if !ok {
			continue
		}
		page, err := s.store.List(ctx, layout.ResourcePrefix(res), storage.ListOptions{})
		if err != nil {
			s.log.Error("listing webhook configurations for CA injection", "err", err)
			return
		}
		for _, kv := range page.Items {
			if !bytes.Contains(kv.Value, []byte(InjectCAAnnotation)) {
				continue
			}
			obj, err := layout.Decode(res, kv)
			if err != nil {
				continue
			}
			if got, ok, err := caSourceOf(accessor(obj)); !ok || err != nil || got != src {
				continue
			}
			if bundle == nil {
				if bundle, err = s.caBundleFrom(ctx, src); err != nil {
					return
				}
			}
			if staleCA(obj, bundle) {
				s.refreshCA(ctx, res, accessor(obj).GetName())
			}
		}
	}
}

// webhookConfigWritten closes the race between a configuration write that
// read its Secret and a Secret write that listed configurations before that
// write was stored: if what was stored no longer matches the Secret, it is
// refreshed.
func (s *Server) webhookConfigWritten(ctx context.Context, res *registry.Resource, obj runtime.Object) {
	src, ok, err := caSourceOf(accessor(obj))
	if !ok || err != nil {
		return
	}
	if bundle, err := s.caBundleFrom(ctx, src); err == nil && staleCA(obj, bundle) {
		s.refreshCA(ctx, res, accessor(obj).GetName())
	}
}

// staleCA reports whether a webhook of obj has a caBundle other than bundle.
func staleCA(obj runtime.Object, bundle []byte) bool {
	for _, cc := range clientConfigs(obj) {
		if !bytes.Equal(cc.CABundle, bundle) {
			return true
		}
	}
	return false
}

// refreshCA rewrites one configuration unchanged, as caInjector: the write
// path's injectCA does the work, admission sees an ordinary update (retried
// from the new object if another write gets in between), and nothing is
// written when the caBundles are already current.
func (s *Server) refreshCA(ctx context.Context, res *registry.Resource, name string) {
	rq := &request{
		info: &requestInfo{IsResource: true, Verb: "update", APIPrefix: "apis",
			Group: res.Group, Version: res.Version, Resource: res.Resource, Name: name},
		user: caInjector, record: admission.NewRecord(), event: &RequestEvent{UserAgent: caInjectorManager},
	}
	opts := &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}, FieldManager: caInjectorManager}
	unchanged := func(current runtime.Object) (runtime.Object, error) {
		if current == nil {
			return nil, errNotFound(res, name)
		}
		return current, nil
	}
	_, _, err := s.update(ctx, rq, res, unchanged, opts)
	if err != nil && !apierrors.IsNotFound(err) {
		s.log.Warn("injecting a CA bundle", "resource", res.Resource, "name", name, "err", err)
	}
	for _, w := range rq.record.Warnings() {
		s.log.Warn("injecting a CA bundle", "resource", res.Resource, "name", name, "warning", w)
	}
}
