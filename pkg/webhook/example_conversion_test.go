package webhook_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/webhook"
)

// A conversion webhook for kind Endpoint of net.example.com: EndpointV2
// (spec.address) is the hub, EndpointV1 (spec.host, spec.port) and
// EndpointV3 (spec.target) convert to and from it. Serve it with
//
//	http.Handle("/convert", webhook.ServeConversion(converter))
//
// and name that path in the CRD's spec.conversion.webhook.clientConfig.
func ExampleSchemeConverter() {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(endpointV1GV.WithKind("Endpoint"), &EndpointV1{})
	scheme.AddKnownTypeWithName(endpointV2GV.WithKind("Endpoint"), &EndpointV2{})
	scheme.AddKnownTypeWithName(endpointV3GV.WithKind("Endpoint"), &EndpointV3{})
	converter := webhook.SchemeConverter(scheme)

	v1 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "net.example.com/v1", "kind": "Endpoint",
		"metadata": map[string]any{"name": "db"},
		"spec":     map[string]any{"host": "db.local", "port": int64(5432)},
	}}
	v3, err := converter.Convert(context.Background(), v1, "net.example.com/v3")
	if err != nil {
		fmt.Println(err)
		return
	}
	target, _, _ := unstructured.NestedString(v3.Object, "spec", "target")
	fmt.Println(v3.GetAPIVersion(), v3.GetName(), target)
	// Output: net.example.com/v3 db db.local:5432
}
