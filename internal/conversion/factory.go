package conversion

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

// ServiceResolver finds the address (host:port) to dial for a webhook
// behind a Service (the server's, which reads --service-map first).
type ServiceResolver interface {
	ResolveService(namespace, name string, port int32) (string, error)
}

// Factory builds the converters of definitions, sharing webhook clients
// between definitions with the same client configuration.
type Factory struct {
	clients *clientCache
	metrics *Metrics
}

// NewFactory returns a factory whose service webhooks are reached through
// resolver and whose webhook conversions are recorded in metrics (nil:
// not recorded).
func NewFactory(resolver ServiceResolver, metrics *Metrics) *Factory {
	return &Factory{clients: newClientCache(resolver), metrics: metrics}
}

// ConverterFor is the converter of crd's conversion strategy.
func (f *Factory) ConverterFor(crd *apiextensionsv1.CustomResourceDefinition) (registry.Converter, error) {
	var inner registry.Converter = registry.RelabelConverter{}
	if c := crd.Spec.Conversion; c != nil && c.Strategy == apiextensionsv1.WebhookConverter {
		if c.Webhook == nil || c.Webhook.ClientConfig == nil {
			return nil, fmt.Errorf("conversion webhook for %s has no client configuration", crd.Name)
		}
		client, err := f.clients.get(crd.Name, *c.Webhook.ClientConfig)
		if err != nil {
			return nil, err
		}
		inner = &webhookConverter{crdName: crd.Name, client: client, reviewVersions: c.Webhook.ConversionReviewVersions, metrics: f.metrics}
	} else if c != nil && c.Strategy != "" && c.Strategy != apiextensionsv1.NoneConverter {
		return nil, fmt.Errorf("unknown conversion strategy %q for CRD %s", c.Strategy, crd.Name)
	}
	valid := map[schema.GroupVersion]bool{}
	for _, v := range crd.Spec.Versions {
		valid[schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}] = true
	}
	return &versionChecked{valid: valid, inner: inner}, nil
}

// versionChecked refuses conversions from or to a version the definition
// does not have, as upstream's converter does before any strategy.
type versionChecked struct {
	valid map[schema.GroupVersion]bool
	inner registry.Converter
}

func (v *versionChecked) Convert(ctx context.Context, objs []*unstructured.Unstructured, gv schema.GroupVersion) error {
	if len(objs) == 0 {
		return nil
	}
	if !v.valid[gv] {
		return fmt.Errorf("request to convert CR to an invalid group/version: %s", gv)
	}
	for i, o := range objs {
		from := o.GroupVersionKind().GroupVersion()
		if v.valid[from] {
			continue
		}
		if len(objs) == 1 {
			return fmt.Errorf("request to convert CR from an invalid group/version: %s", from)
		}
		return fmt.Errorf("request to convert CR list failed, list index %d has invalid group/version: %s", i, from)
	}
	return v.inner.Convert(ctx, objs, gv)
}
