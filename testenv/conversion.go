package testenv

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

var crdResource = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// Conversion is the spec.conversion of a CustomResourceDefinition whose
// conversion webhook is w at path: strategy Webhook, ConversionReview v1.
// Serve it with webhook.NewConversionHandler.
func (w *Webhook) Conversion(path string) *apiextensionsv1.CustomResourceConversion {
	url := w.URL + path
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: w.CABundle},
			ConversionReviewVersions: []string{"v1"},
		},
	}
}

// RegisterConversion makes the stored CustomResourceDefinition crdName
// convert its versions through w (w.Conversion(path)), in effect when it
// returns; when the test ends the definition goes back to strategy None
// (unless it is gone).
func (e *Env) RegisterConversion(t testing.TB, crdName string, w *Webhook, path string) {
	t.Helper()
	if err := e.setConversion(crdName, w.Conversion(path)); err != nil {
		t.Fatalf("registering the conversion webhook of %s: %v", crdName, err)
	}
	t.Cleanup(func() {
		select {
		case <-e.srv.Done():
			return
		default:
		}
		none := &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		if err := e.setConversion(crdName, none); err != nil {
			t.Logf("unregistering the conversion webhook of %s: %v", crdName, err)
		}
	})
}

// setConversion replaces the definition's spec.conversion with a merge
// patch (webhook: null clears the old client configuration).
func (e *Env) setConversion(crdName string, conv *apiextensionsv1.CustomResourceConversion) error {
	client, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	value := map[string]any{"strategy": conv.Strategy, "webhook": nil}
	if conv.Webhook != nil {
		value["webhook"] = conv.Webhook
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"conversion": value}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = client.Resource(crdResource).Patch(ctx, crdName, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}
