package controllers

import (
	"bytes"
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// conversionCRDJSON is a definition with a conversion webhook at url, CA
// injected from secret.
func conversionCRDJSON(secret string) string {
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com", "annotations": map[string]string{InjectCAAnnotation: secret}},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"kind": "Widget", "plural": "widgets"},
			"versions": []any{
				map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
				map[string]any{"name": "v2", "served": true, "storage": false, "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
			},
			"conversion": map[string]any{"strategy": "Webhook", "webhook": map[string]any{
				"conversionReviewVersions": []string{"v1"},
				"clientConfig":             map[string]any{"url": "https://127.0.0.1:1/convert"},
			}},
		},
	})
	return string(b)
}

func conversionCABundle(t *testing.T, body []byte) []byte {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal(body, &crd); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	c := crd.Spec.Conversion
	if c == nil || c.Webhook == nil || c.Webhook.ClientConfig == nil {
		t.Fatalf("no conversion webhook in %s", body)
	}
	return c.Webhook.ClientConfig.CABundle
}

func TestCAInjectionFillsConversionWebhooks(t *testing.T) {
	ts := newCluster(t)
	ca := newCAPEM(t)
	ts.send(201, "POST", secretPath, "application/json", secretJSON("conv-ca", map[string][]byte{"ca.crt": ca}))
	created := bodyOf(ts.send(201, "POST", crdPath, "application/json", conversionCRDJSON("default/conv-ca")))
	if got := conversionCABundle(t, created); !bytes.Equal(got, ca) {
		t.Errorf("created caBundle %q, want the Secret's", got)
	}
	// A new CA in the Secret reaches the definition.
	next := newCAPEM(t)
	ts.send(200, "PUT", secretPath+"/conv-ca", "application/json", secretJSON("conv-ca", map[string][]byte{"ca.crt": next}))
	got := conversionCABundle(t, bodyOf(ts.send(200, "GET", crdPath+"/widgets.example.com", "", "")))
	if !bytes.Equal(got, next) {
		t.Errorf("caBundle after the Secret changed %q, want the new CA", got)
	}
}
