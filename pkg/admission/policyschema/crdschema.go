package policyschema

import (
	"encoding/json"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// objectMetaType is the schema name of ObjectMeta in the built-in schemas.
const objectMetaType = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// builtinSchema is the structured-merge schema of the built-in types,
// which holds ObjectMeta and everything it refers to.
var builtinSchema = sync.OnceValues(func() (*smdschema.Schema, error) {
	stub := &unstructured.Unstructured{}
	stub.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	tv, err := BuiltinConverter().ObjectToTyped(stub)
	if err != nil {
		return nil, err
	}
	return tv.Schema(), nil
})

// NewCRDTypeConverter returns the structured-merge schema of one version of
// a custom resource, for ApplyConfiguration mutations: the version's
// openAPIV3Schema with apiVersion, kind and the built-in ObjectMeta at the
// top, as in the OpenAPI document kube-apiserver publishes for it. A
// version without a schema keeps unknown fields.
func NewCRDTypeConverter(crd *apiextensionsv1.CustomResourceDefinition, version string) (managedfields.TypeConverter, error) {
	root := &spec.Schema{}
	found := false
	for _, v := range crd.Spec.Versions {
		if v.Name != version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		raw, err := json.Marshal(v.Schema.OpenAPIV3Schema)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, root); err != nil {
			return nil, err
		}
		found = true
	}
	if !found {
		root.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	}
	if root.Properties == nil {
		root.Properties = map[string]spec.Schema{}
	}
	root.Type = spec.StringOrArray{"object"}
	root.Properties["apiVersion"] = *spec.StringProperty()
	root.Properties["kind"] = *spec.StringProperty()
	root.Properties["metadata"] = *spec.RefSchema("#/components/schemas/" + objectMetaType)
	name := fmt.Sprintf("%s.%s.%s", crd.Spec.Group, version, crd.Spec.Names.Kind)
	crdSchema, err := schemaconv.ToSchemaFromOpenAPI(map[string]*spec.Schema{name: root}, false)
	if err != nil {
		return nil, err
	}
	builtin, err := builtinSchema()
	if err != nil {
		return nil, err
	}
	parser := &typed.Parser{}
	parser.Schema.Types = append(append([]smdschema.TypeDef(nil), builtin.Types...), crdSchema.Types...)
	return &crdTypeConverter{parser: parser, typeName: name}, nil
}

// crdTypeConverter converts objects of one custom resource kind.
type crdTypeConverter struct {
	parser   *typed.Parser
	typeName string
}

func (t *crdTypeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		u = &unstructured.Unstructured{Object: m}
	}
	return t.parser.Type(t.typeName).FromUnstructured(u.Object, opts...)
}

func (t *crdTypeConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	m, ok := v.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("failed to convert value to unstructured for type %T", v.AsValue().Unstructured())
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// CRDSchema is the schema of one version of a custom resource as policies
// are type-checked against it: the version's openAPIV3Schema with
// apiVersion, kind and the ObjectMeta fields expressions read at the top.
// A version without a schema gives an object with only those three.
func CRDSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) *spec.Schema {
	root := &spec.Schema{}
	for _, v := range crd.Spec.Versions {
		if v.Name != version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		raw, err := json.Marshal(v.Schema.OpenAPIV3Schema)
		if err != nil || json.Unmarshal(raw, root) != nil {
			return nil
		}
	}
	if root.Properties == nil {
		root.Properties = map[string]spec.Schema{}
	}
	root.Type = spec.StringOrArray{"object"}
	root.Properties["apiVersion"] = *spec.StringProperty()
	root.Properties["kind"] = *spec.StringProperty()
	root.Properties["metadata"] = objectMetaSchema()
	return root
}

// objectMetaSchema is the part of ObjectMeta expressions read.
func objectMetaSchema() spec.Schema {
	strs := spec.MapProperty(spec.StringProperty())
	props := map[string]spec.Schema{
		"labels": *strs, "annotations": *strs, "finalizers": *spec.ArrayProperty(spec.StringProperty()),
		"generation": *spec.Int64Property(), "deletionGracePeriodSeconds": *spec.Int64Property(),
		"creationTimestamp": *spec.DateTimeProperty(), "deletionTimestamp": *spec.DateTimeProperty(),
	}
	for _, s := range []string{"name", "generateName", "namespace", "uid", "resourceVersion"} {
		props[s] = *spec.StringProperty()
	}
	free := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	free.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	props["ownerReferences"] = *spec.ArrayProperty(&free)
	props["managedFields"] = *spec.ArrayProperty(&free)
	return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: props}}
}
