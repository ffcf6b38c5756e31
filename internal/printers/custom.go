package printers

import (
	"bytes"
	"encoding/json"
	"reflect"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"
)

// defaultCustomColumns are what a CRD version without
// additionalPrinterColumns is served with.
var defaultCustomColumns = []apiextensionsv1.CustomResourceColumnDefinition{
	{Name: "Age", Type: "date", Description: objectMetaDoc["creationTimestamp"], JSONPath: ".metadata.creationTimestamp"},
}

// customPrinter lays out custom resources as the apiextensions server does:
// Name, then one column per additionalPrinterColumn, evaluated with JSONPath.
// Like upstream it stops at the first column whose JSONPath does not parse.
func customPrinter(cols []apiextensionsv1.CustomResourceColumnDefinition) printer {
	if len(cols) == 0 {
		cols = defaultCustomColumns
	}
	p := printer{columns: []metav1.TableColumnDefinition{nameColumn}}
	var paths []*jsonpath.JSONPath
	for _, c := range cols {
		path := jsonpath.New(c.Name)
		if err := path.Parse("{" + c.JSONPath + "}"); err != nil {
			break
		}
		path.AllowMissingKeys(true)
		paths = append(paths, path)
		desc := c.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
		p.columns = append(p.columns, metav1.TableColumnDefinition{
			Name: c.Name, Type: c.Type, Format: c.Format, Description: desc, Priority: c.Priority,
		})
	}
	p.row = func(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
		return customRow(obj, p.columns[1:], paths, now)
	}
	return p
}

func customRow(obj runtime.Object, cols []metav1.TableColumnDefinition, paths []*jsonpath.JSONPath, now time.Time) (metav1.TableRow, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return metav1.TableRow{}, err
	}
	var content map[string]any
	if u, ok := obj.(runtime.Unstructured); ok {
		content = u.UnstructuredContent()
	} else if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
		return metav1.TableRow{}, err
	}
	cells := make([]any, 1, 1+len(paths))
	cells[0] = m.GetName()
	for i, path := range paths {
		cells = append(cells, customCell(path, cols[i].Type, content, now))
	}
	return metav1.TableRow{Cells: cells}, nil
}

// customCell evaluates one column: a string column prints its value as
// JSONPath output does, other types keep the JSON value when it has that
// type, and nil (printed <none>) stands for anything else.
func customCell(path *jsonpath.JSONPath, typ string, content map[string]any, now time.Time) any {
	results, err := path.FindResults(content)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	value := results[0][0].Interface()
	if typ == "string" {
		var buf bytes.Buffer
		if err := path.PrintResults(&buf, []reflect.Value{reflect.ValueOf(value)}); err != nil {
			return nil
		}
		return buf.String()
	}
	return typedCell(typ, value, now)
}

// typedCell converts a JSON value to the cell of a column type, nil when it
// does not fit.
func typedCell(typ string, value any, now time.Time) any {
	switch typ {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
	case "date":
		if s, ok := value.(string); ok {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return since(t, now)
		}
	}
	return nil
}
