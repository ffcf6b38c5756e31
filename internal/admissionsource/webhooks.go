package admissionsource

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission/webhooks"
	"github.com/admitd/admitd/pkg/storage"
)

var (
	mutatingWebhooksGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations")
	validatingWebhooksGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
)

// WebhookConfigs keeps the webhook configurations of storage as the
// snapshot the webhook plugins read.
type WebhookConfigs = ConfigCache[webhooks.Snapshot]

var _ webhooks.Source = (*WebhookConfigs)(nil)

// NewWebhookConfigs returns an empty cache; call Reload before serving.
func NewWebhookConfigs(store storage.Store, cat *registry.Catalogue) *WebhookConfigs {
	return NewConfigCache(store, cat, []schema.GroupVersionResource{mutatingWebhooksGVR, validatingWebhooksGVR}, webhookSnapshot)
}

func webhookSnapshot(objs []runtime.Object) *webhooks.Snapshot {
	var mutating []*admissionregistrationv1.MutatingWebhookConfiguration
	var validating []*admissionregistrationv1.ValidatingWebhookConfiguration
	for _, obj := range objs {
		switch c := obj.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			mutating = append(mutating, c)
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			validating = append(validating, c)
		}
	}
	return webhooks.NewSnapshot(mutating, validating)
}
