package lint

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/admissionregistration/v1"
	v1beta1 "k8s.io/api/admissionregistration/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/apis/admissionregistration"
)

// Set is the configuration to lint: admission configuration objects in
// admissionregistration.k8s.io/v1 form (defaulted as the API server
// defaults them), the namespaces and services they refer to, and every
// other object as a candidate param. Build it with Add, Decode, Load or
// FromServer. A Set is not safe for concurrent use.
type Set struct {
	MutatingWebhooks   []*v1.MutatingWebhookConfiguration
	ValidatingWebhooks []*v1.ValidatingWebhookConfiguration
	ValidatingPolicies []*v1.ValidatingAdmissionPolicy
	ValidatingBindings []*v1.ValidatingAdmissionPolicyBinding
	MutatingPolicies   []*v1.MutatingAdmissionPolicy
	MutatingBindings   []*v1.MutatingAdmissionPolicyBinding
	// Namespaces give namespaceSelectors their labels. A namespace that is
	// not here is taken to have only kubernetes.io/metadata.name, the
	// label every namespace has.
	Namespaces []*corev1.Namespace
	Services   []*corev1.Service
	// Params are the other objects, looked up by policies' paramKind.
	Params []*unstructured.Unstructured

	origin     map[runtime.Object]Object
	namespaces namespaceLookup // by name, filled by namespaceLookup
	// unservedKinds are param kinds the server does not serve (FromServer).
	unservedKinds []schema.GroupVersionKind
}

const admissionGroup = "admissionregistration.k8s.io"

// Add adds one object, typed or unstructured, read from source. Objects of
// admissionregistration.k8s.io/v1beta1 and v1alpha1 are converted to v1
// after their own version's defaults.
func (s *Set) Add(obj runtime.Object, source string) error {
	u, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	s.namespaces = nil
	gvk := u.GroupVersionKind()
	origin := Object{APIVersion: u.GetAPIVersion(), Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName(), Source: source}
	typed, err := s.typed(u)
	if err != nil {
		return fmt.Errorf("%s %s/%s: %w", source, gvk.Kind, u.GetName(), err)
	}
	if s.origin == nil {
		s.origin = map[runtime.Object]Object{}
	}
	s.origin[typed] = origin
	return nil
}

// typed converts u to its v1 type and files it.
func (s *Set) typed(u *unstructured.Unstructured) (runtime.Object, error) {
	gvk := u.GroupVersionKind()
	if gvk.Group == admissionGroup {
		if obj, err := s.admissionObject(u); obj != nil || err != nil {
			return obj, err
		}
	}
	if gvk.Group == "" && gvk.Version == "v1" {
		switch gvk.Kind {
		case "Namespace":
			ns := &corev1.Namespace{}
			s.Namespaces = append(s.Namespaces, ns)
			return ns, convert(u.Object, ns)
		case "Service":
			svc := &corev1.Service{}
			s.Services = append(s.Services, svc)
			return svc, convert(u.Object, svc)
		}
	}
	s.Params = append(s.Params, u)
	return u, nil
}

// admissionObject files an admissionregistration object; nil for a kind
// it does not lint.
func (s *Set) admissionObject(u *unstructured.Unstructured) (runtime.Object, error) {
	content := u.Object
	if u.GroupVersionKind().Version == "v1beta1" {
		var err error
		if content, err = v1beta1WebhookDefaults(u); err != nil {
			return nil, err
		}
	}
	var obj runtime.Object
	switch u.GetKind() {
	case "MutatingWebhookConfiguration":
		o := &v1.MutatingWebhookConfiguration{}
		s.MutatingWebhooks, obj = append(s.MutatingWebhooks, o), o
	case "ValidatingWebhookConfiguration":
		o := &v1.ValidatingWebhookConfiguration{}
		s.ValidatingWebhooks, obj = append(s.ValidatingWebhooks, o), o
	case "ValidatingAdmissionPolicy":
		o := &v1.ValidatingAdmissionPolicy{}
		s.ValidatingPolicies, obj = append(s.ValidatingPolicies, o), o
	case "ValidatingAdmissionPolicyBinding":
		o := &v1.ValidatingAdmissionPolicyBinding{}
		s.ValidatingBindings, obj = append(s.ValidatingBindings, o), o
	case "MutatingAdmissionPolicy":
		o := &v1.MutatingAdmissionPolicy{}
		s.MutatingPolicies, obj = append(s.MutatingPolicies, o), o
	case "MutatingAdmissionPolicyBinding":
		o := &v1.MutatingAdmissionPolicyBinding{}
		s.MutatingBindings, obj = append(s.MutatingBindings, o), o
	default:
		return nil, nil
	}
	if err := convert(content, obj); err != nil {
		return nil, err
	}
	admissionregistration.Default(obj)
	return obj, nil
}

// v1beta1WebhookDefaults applies admissionregistration.k8s.io/v1beta1's
// webhook defaults, which differ from v1's: failurePolicy Ignore,
// matchPolicy Exact, sideEffects Unknown, timeoutSeconds 30 and
// admissionReviewVersions [v1beta1]. Other kinds are returned as they are.
func v1beta1WebhookDefaults(u *unstructured.Unstructured) (map[string]any, error) {
	var hooks []*v1beta1.ValidatingWebhook
	switch u.GetKind() {
	case "ValidatingWebhookConfiguration":
		c := &v1beta1.ValidatingWebhookConfiguration{}
		if err := convert(u.Object, c); err != nil {
			return nil, err
		}
		for i := range c.Webhooks {
			hooks = append(hooks, &c.Webhooks[i])
		}
		defaultV1beta1(hooks)
		return toMap(c)
	case "MutatingWebhookConfiguration":
		c := &v1beta1.MutatingWebhookConfiguration{}
		if err := convert(u.Object, c); err != nil {
			return nil, err
		}
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			vw := &v1beta1.ValidatingWebhook{FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy, SideEffects: w.SideEffects,
				TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions}
			defaultV1beta1([]*v1beta1.ValidatingWebhook{vw})
			w.FailurePolicy, w.MatchPolicy, w.SideEffects = vw.FailurePolicy, vw.MatchPolicy, vw.SideEffects
			w.TimeoutSeconds, w.AdmissionReviewVersions = vw.TimeoutSeconds, vw.AdmissionReviewVersions
		}
		return toMap(c)
	}
	return u.Object, nil
}

func defaultV1beta1(hooks []*v1beta1.ValidatingWebhook) {
	for _, w := range hooks {
		if w.FailurePolicy == nil {
			w.FailurePolicy = ptr.To(v1beta1.Ignore)
		}
		if w.MatchPolicy == nil {
			w.MatchPolicy = ptr.To(v1beta1.Exact)
		}
		if w.SideEffects == nil {
			w.SideEffects = ptr.To(v1beta1.SideEffectClassUnknown)
		}
		if w.TimeoutSeconds == nil {
			w.TimeoutSeconds = ptr.To[int32](30)
		}
		if len(w.AdmissionReviewVersions) == 0 {
			w.AdmissionReviewVersions = []string{"v1beta1"}
		}
	}
}

// originOf returns where obj came from and what it was called.
func (s *Set) originOf(obj runtime.Object) Object {
	if o, ok := s.origin[obj]; ok {
		return o
	}
	return objectOf(obj)
}

// objectOf names an object that was not added through Add.
func objectOf(obj runtime.Object) Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		return Object{}
	}
	apiVersion, kind := obj.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
	if kind == "" {
		apiVersion, kind = admissionGroup+"/v1", kindOfTyped(obj)
	}
	return Object{APIVersion: apiVersion, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}
}

func kindOfTyped(obj runtime.Object) string {
	switch obj.(type) {
	case *v1.MutatingWebhookConfiguration:
		return "MutatingWebhookConfiguration"
	case *v1.ValidatingWebhookConfiguration:
		return "ValidatingWebhookConfiguration"
	case *v1.ValidatingAdmissionPolicy:
		return "ValidatingAdmissionPolicy"
	case *v1.ValidatingAdmissionPolicyBinding:
		return "ValidatingAdmissionPolicyBinding"
	case *v1.MutatingAdmissionPolicy:
		return "MutatingAdmissionPolicy"
	case *v1.MutatingAdmissionPolicyBinding:
		return "MutatingAdmissionPolicyBinding"
	}
	return ""
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func toMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	return m, json.Unmarshal(data, &m)
}

// convert copies content into out through JSON, the way the API server
// decodes a body (unknown fields are dropped).
func convert(content map[string]any, out any) error {
	data, err := json.Marshal(content)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
