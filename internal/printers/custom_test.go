package printers

import (
	"reflect"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

func widgetCRD(cols ...apiextensionsv1.CustomResourceColumnDefinition) *registry.Resource {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
		Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1", Served: true, Storage: true, AdditionalPrinterColumns: cols},
		},
	}}
	return registry.CustomResources(crd)[0]
}

func widget(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": "default", "creationTimestamp": created.UTC().Format(time.RFC3339)},
		"spec":     spec,
	}}
}

// TestCustomResourceDefaultColumns: a CRD version without
// additionalPrinterColumns serves Name and a date-typed Age.
func TestCustomResourceDefaultColumns(t *testing.T) {
	res := widgetCRD()
	tbl := Table(res, []runtime.Object{widget(nil)}, now, Options{})
	want := []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Age", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
	}
	if !reflect.DeepEqual(tbl.ColumnDefinitions, want) {
		t.Errorf("Table(widgets) columns = %+v, want %+v", tbl.ColumnDefinitions, want)
	}
	if cells := []any{"w1", "5m"}; !reflect.DeepEqual(tbl.Rows[0].Cells, cells) {
		t.Errorf("Table(widgets) cells = %#v, want %#v", tbl.Rows[0].Cells, cells)
	}
}

// TestCustomResourceColumns mirrors the apiextensions server's
// Test_convertor_ConvertToTable and Test_cellForJSONValue
// (pkg/registry/customresource/tableconvertor).
func TestCustomResourceColumns(t *testing.T) {
	res := widgetCRD(
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Size", Type: "integer", JSONPath: ".spec.size", Description: "How big."},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Ratio", Type: "number", JSONPath: ".spec.ratio"},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Color", Type: "string", JSONPath: ".spec.color"},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Tags", Type: "string", JSONPath: ".spec.tags", Priority: 1},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "On", Type: "boolean", JSONPath: ".spec.on"},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Since", Type: "date", JSONPath: ".spec.since"},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	)
	columns := []string{"Name", "Size", "Ratio", "Color", "+Tags", "On", "Since", "Age"}
	checkKind(t, res, columns, []cellCase{
		{name: "every type", obj: widget(map[string]any{
			"size": int64(3), "ratio": 0.5, "color": "red", "tags": []any{"a", "b"}, "on": true,
			"since": now.Add(-2 * time.Hour).Format(time.RFC3339),
		}), cells: []any{"w1", int64(3), 0.5, "red", `["a","b"]`, true, "120m", "5m"}},
		{name: "converted numbers", obj: widget(map[string]any{"size": 3.9, "ratio": int64(2)}),
			cells: []any{"w1", int64(3), float64(2), nil, nil, nil, nil, "5m"}},
		{name: "missing and mistyped", obj: widget(map[string]any{"size": "big", "on": "yes", "since": "yesterday", "color": int64(7)}),
			cells: []any{"w1", nil, nil, "7", nil, nil, "<invalid>", "5m"}},
	})
	if got := res.PrinterColumns[0].Description; got != "How big." {
		t.Errorf("registry column description = %q, want the CRD's", got)
	}
	tbl := Table(res, nil, now, Options{})
	if d := tbl.ColumnDefinitions[2].Description; d != "Custom resource definition column (in JSONPath format): .spec.ratio" {
		t.Errorf("Table(widgets) Ratio description = %q, want the JSONPath default", d)
	}
}

// TestCustomResourceBadJSONPath: like upstream, columns stop at the first
// JSONPath that does not parse.
func TestCustomResourceBadJSONPath(t *testing.T) {
	res := widgetCRD(
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Color", Type: "string", JSONPath: ".spec.color"},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Bad", Type: "string", JSONPath: ".spec[?("},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "After", Type: "string", JSONPath: ".spec.after"},
	)
	checkKind(t, res, []string{"Name", "Color"}, []cellCase{
		{name: "bad path", obj: widget(map[string]any{"color": "blue"}), cells: []any{"w1", "blue"}},
	})
}
