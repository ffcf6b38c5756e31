package policies_test

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/admission/policyschema"
)

// This file holds the honest fakes the tests run the plugins with: a
// schema over client-go's scheme plus two custom resource kinds, an
// in-memory object store serving namespaces and params, and an authorizer
// that denies secrets.

var (
	widgetsV1      = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	widgetsV1beta1 = schema.GroupVersionResource{Group: "example.com", Version: "v1beta1", Resource: "widgets"}
)

// fakeSchema knows the built-in kinds of client-go and the widgets custom
// resource in versions v1 and v1beta1 (equivalent, conversion None).
type fakeSchema struct{}

var _ admission.Schema = fakeSchema{}

func (fakeSchema) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if gvk.Group == "example.com" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u, nil
	}
	obj, err := clientgoscheme.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}

func (fakeSchema) ConvertTo(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	if obj.GetObjectKind().GroupVersionKind() == gvk {
		return obj, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		out := u.DeepCopy()
		out.SetGroupVersionKind(gvk)
		return out, nil
	}
	return nil, fmt.Errorf("converting (%s) to (%s): unknown conversion", obj.GetObjectKind().GroupVersionKind(), gvk)
}

func (fakeSchema) Default(runtime.Object) {}

func (fakeSchema) EquivalentResourcesFor(gvr schema.GroupVersionResource, sub string) []schema.GroupVersionResource {
	if gvr.GroupResource() == widgetsV1.GroupResource() {
		return []schema.GroupVersionResource{widgetsV1, widgetsV1beta1}
	}
	return []schema.GroupVersionResource{gvr}
}

func (fakeSchema) KindFor(gvr schema.GroupVersionResource, sub string) schema.GroupVersionKind {
	if gvr.GroupResource() == widgetsV1.GroupResource() {
		return gvr.GroupVersion().WithKind("Widget")
	}
	return schema.GroupVersionKind{}
}

// objectStore serves namespaces and params from memory.
type objectStore struct {
	namespaces map[string]*corev1.Namespace
	// objects by resource, then "namespace/name".
	objects map[schema.GroupVersionResource]map[string]runtime.Object
}

func newObjectStore() *objectStore {
	return &objectStore{namespaces: map[string]*corev1.Namespace{},
		objects: map[schema.GroupVersionResource]map[string]runtime.Object{}}
}

func (s *objectStore) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := s.namespaces[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

// paramKinds are the kinds the store serves as params.
var paramKinds = map[schema.GroupVersionKind]struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}{
	{Version: "v1", Kind: "ConfigMap"}:                        {corev1.SchemeGroupVersion.WithResource("configmaps"), true},
	{Group: "example.com", Version: "v1", Kind: "Widget"}:     {widgetsV1, true},
	{Group: "example.com", Version: "v1", Kind: "ClusterCfg"}: {schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "clustercfgs"}, false},
}

func (s *objectStore) ResolveParamKind(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, bool) {
	k, ok := paramKinds[gvk]
	return k.gvr, k.namespaced, ok
}

func (s *objectStore) GetParam(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	if obj, ok := s.objects[gvr][namespace+"/"+name]; ok {
		return obj.DeepCopyObject(), nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (s *objectStore) ListParams(_ context.Context, gvr schema.GroupVersionResource, namespace string, sel labels.Selector) ([]runtime.Object, error) {
	var keys []string
	for k := range s.objects[gvr] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []runtime.Object
	for _, k := range keys {
		obj := s.objects[gvr][k]
		m, _ := meta.Accessor(obj)
		if (namespace == "" || m.GetNamespace() == namespace) && sel.Matches(labels.Set(m.GetLabels())) {
			out = append(out, obj.DeepCopyObject())
		}
	}
	return out, nil
}

// add stores an object (a namespace or a param), as the server would
// decode it: with its apiVersion and kind.
func (s *objectStore) add(obj runtime.Object) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		s.namespaces[ns.Name] = ns
		return
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	k, ok := paramKinds[gvk]
	if !ok {
		panic(fmt.Sprintf("no param kind %v", gvk))
	}
	m, _ := meta.Accessor(obj)
	if s.objects[k.gvr] == nil {
		s.objects[k.gvr] = map[string]runtime.Object{}
	}
	s.objects[k.gvr][m.GetNamespace()+"/"+m.GetName()] = obj
}

// denySecrets is an authorizer that allows everything, except secrets to
// the user eve.
var denySecrets = admission.AuthorizerFunc(func(_ context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
	if a.Resource == "secrets" && a.User.Username == "eve" {
		return admission.AuthorizationDeny, "secrets are forbidden", nil
	}
	return admission.AuthorizationAllow, "", nil
})

func namespace(name string, lbls map[string]string) *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

// widgetCRD is the definition of widgets.example.com the conformance
// scenarios (test/conformance) install: spec and status keep unknown fields.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// widgetConverters serves the widget schemas.
var widgetConverters = policies.TypeConverterFunc(func(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	if gvk.GroupKind() != (schema.GroupKind{Group: "example.com", Kind: "Widget"}) {
		return nil
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(widgetCRD), crd); err != nil {
		panic(err)
	}
	tc, err := policyschema.NewCRDTypeConverter(crd, gvk.Version)
	if err != nil {
		panic(err)
	}
	return tc
})
