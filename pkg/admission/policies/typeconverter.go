package policies

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/admitd/admitd/pkg/admission/policyschema"
)

// TypeConverterSource gives the structured-merge schema of a kind that the
// built-in schemas do not know, such as a custom resource; nil when it has
// none (the mutation then fails with a 503, as upstream right after a CRD
// is created).
type TypeConverterSource interface {
	TypeConverter(gvk schema.GroupVersionKind) managedfields.TypeConverter
}

// TypeConverterFunc adapts a function to TypeConverterSource.
type TypeConverterFunc func(gvk schema.GroupVersionKind) managedfields.TypeConverter

// TypeConverter calls f(gvk).
func (f TypeConverterFunc) TypeConverter(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	return f(gvk)
}

// typeConverter returns the converter for gvk: the built-in one when it
// knows the kind, else the source's.
func (m *Mutating) typeConverter(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	stub := &unstructured.Unstructured{}
	stub.SetGroupVersionKind(gvk)
	if tc := policyschema.BuiltinConverter(); tc != nil {
		if _, err := tc.ObjectToTyped(stub); err == nil {
			return tc
		}
	}
	if m.o.TypeConverters == nil {
		return nil
	}
	return m.o.TypeConverters.TypeConverter(gvk)
}

// NewCRDTypeConverter is policyschema.NewCRDTypeConverter, kept here for
// the library's users.
func NewCRDTypeConverter(crd *apiextensionsv1.CustomResourceDefinition, version string) (managedfields.TypeConverter, error) {
	return policyschema.NewCRDTypeConverter(crd, version)
}
