package registry

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

const widgetSchema = `
type: object
properties:
  spec:
    type: object
    required: [size]
    x-kubernetes-validations:
    - rule: "self.size <= self.maxSize"
      message: size must not exceed maxSize
    - rule: "self.color == oldSelf.color"
      message: color is immutable
    properties:
      size: {type: integer, minimum: 1}
      maxSize: {type: integer, default: 5}
      color: {type: string, enum: [red, blue], default: red}
      labels:
        type: object
        additionalProperties: {type: string}
      free:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

func compileWidget(t *testing.T) *crSchema {
	t.Helper()
	var props apiextensionsv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(widgetSchema), &props); err != nil {
		t.Fatal(err)
	}
	c, err := compileSchema(&props)
	if err != nil {
		t.Fatalf("compileSchema: %v", err)
	}
	return c
}

func widget(t *testing.T, spec string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := utiljson.Unmarshal([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":`+spec+`}`), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestCustomResourceCoerceReportsUnknownFields(t *testing.T) {
	c := compileWidget(t)
	for _, tc := range []struct {
		name, spec string
		meta       string
		unknown    []string
		wantSpec   string
	}{
		{"known only", `{"size":1}`, "", nil, `{"size":1}`},
		{"unknown nested", `{"size":1,"foo":2,"labels":{"a":"b"},"free":{"x":{"y":1}}}`, "", []string{"spec.foo"}, `{"free":{"x":{"y":1}},"labels":{"a":"b"},"size":1}`},
		{"unknown metadata", `{"size":1}`, "bogus", []string{"metadata.bogus"}, `{"size":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := widget(t, tc.spec)
			obj["other"] = true
			if tc.meta != "" {
				obj["metadata"].(map[string]any)[tc.meta] = 1
			}
			unknown, err := c.coerce(obj)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string{"other"}, tc.unknown...)
			if tc.meta != "" {
				want = append(tc.unknown, "other")
			}
			if !reflect.DeepEqual(unknown, want) {
				t.Errorf("coerce unknown = %v, want %v", unknown, want)
			}
			if got, _ := json.Marshal(obj["spec"]); string(got) != tc.wantSpec {
				t.Errorf("spec after coerce = %s, want %s", got, tc.wantSpec)
			}
		})
	}
}

func TestCustomResourceDefaultsAndValidation(t *testing.T) {
	c := compileWidget(t)
	s := c.strategy()
	obj := &unstructured.Unstructured{Object: widget(t, `{"size":2}`)}
	s.Default(obj)
	if got, _ := json.Marshal(obj.Object["spec"]); string(got) != `{"color":"red","maxSize":5,"size":2}` {
		t.Errorf("defaulted spec = %s", got)
	}
	if errs := s.Validate(obj); len(errs) != 0 {
		t.Errorf("Validate(valid widget) = %v", errs)
	}
	for _, tc := range []struct {
		name, spec string
		want       []string
	}{
		{"type", `{"size":"big","maxSize":5}`, []string{`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`, "some validation rules were not checked"}},
		{"required", `{"maxSize":5}`, []string{"spec.size: Required value"}},
		{"enum and minimum", `{"size":0,"maxSize":5,"color":"pink"}`, []string{"spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1", `spec.color: Unsupported value: "pink": supported values: "red", "blue"`}},
		{"rule", `{"size":9,"maxSize":5}`, []string{"size must not exceed maxSize"}},
	} {
		errs := s.Validate(&unstructured.Unstructured{Object: widget(t, tc.spec)})
		got := errs.ToAggregate()
		for _, w := range tc.want {
			if got == nil || !strings.Contains(got.Error(), w) {
				t.Errorf("%s: Validate = %v, want it to contain %q", tc.name, got, w)
			}
		}
	}
}

func TestCustomResourceUpdateRatchetsAndTransitions(t *testing.T) {
	s := compileWidget(t).strategy()
	old := &unstructured.Unstructured{Object: widget(t, `{"size":0,"maxSize":5,"color":"red"}`)}
	unchanged := &unstructured.Unstructured{Object: widget(t, `{"size":0,"maxSize":5,"color":"red","labels":{"a":"b"}}`)}
	if errs := s.ValidateUpdate(unchanged, old); len(errs) != 0 {
		t.Errorf("an update leaving an invalid field as it was = %v, want it ratcheted", errs)
	}
	recolored := &unstructured.Unstructured{Object: widget(t, `{"size":0,"maxSize":5,"color":"blue"}`)}
	if errs := s.ValidateUpdate(recolored, old); errs.ToAggregate() == nil || !strings.Contains(errs.ToAggregate().Error(), "color is immutable") {
		t.Errorf("transition rule = %v, want color is immutable", errs)
	}
}

func TestNonStructuralSchemaStillPrunes(t *testing.T) {
	props := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string"}}}}}
	if _, err := compileSchema(props); err == nil {
		t.Fatal("compileSchema(schema without a type on spec) = nil error, want not structural")
	}
	s := customResourceStrategy(&apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: props})
	obj := &unstructured.Unstructured{Object: widget(t, `{"a":"x","b":"y"}`)}
	s.Default(obj)
	if got, _ := json.Marshal(obj.Object["spec"]); string(got) != `{"a":"x"}` {
		t.Errorf("pruned spec = %s", got)
	}
}
