package policies_test

import (
	"context"
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/apis/admissionregistration"
)

// The benchmarks measure what upstream's ValidatingAdmissionPolicy plugin
// is benchmarked on, so that the figures compare: policies as the API
// defaults them, a ConfigMap CREATE (with an
// app label) in a namespace without labels, measured after compilation.

func benchPolicy(name, resource string, validations ...string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}}
	p.Spec.MatchConstraints = &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{"CREATE", "UPDATE"},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{resource}},
		}}}}
	for _, v := range validations {
		p.Spec.Validations = append(p.Spec.Validations, admissionregistrationv1.Validation{Expression: v})
	}
	admissionregistration.Default(p)
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
	return p, b
}

func benchConfigMap() *admission.Attributes {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "bench", Labels: map[string]string{"app": "bench"}},
		Data:       map[string]string{"k": "v"}}
	return &admission.Attributes{Name: "cm", Namespace: "bench", Resource: corev1.SchemeGroupVersion.WithResource("configmaps"),
		Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Operation: admission.Create, Object: cm,
		Options: options(admission.Create)}
}

func runValidate(b *testing.B, snap *policies.Snapshot) {
	store := newObjectStore()
	store.add(namespace("bench", nil))
	v, err := policies.NewValidating(policies.Options{Source: policies.StaticSource{Snapshot: snap}, Params: store},
		admission.PluginContext{Namespaces: store, Schema: fakeSchema{}, Authorizer: denySecrets})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	a := benchConfigMap()
	a.Record = admission.NewRecord()
	if err := v.Validate(ctx, a); err != nil { // compiles
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		a.Record = admission.NewRecord()
		if err := v.Validate(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate_1Policy5Validations(b *testing.B) {
	p, bd := benchPolicy("p", "configmaps",
		"object.metadata.name.size() <= 63",
		"has(object.metadata.labels) && 'app' in object.metadata.labels",
		"!has(object.data) || object.data.size() <= 100",
		"object.metadata.namespace != 'kube-system'",
		"!has(object.metadata.annotations) || !('forbidden' in object.metadata.annotations)")
	runValidate(b, &policies.Snapshot{ValidatingPolicies: []*admissionregistrationv1.ValidatingAdmissionPolicy{p},
		ValidatingBindings: []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{bd}})
}

func BenchmarkValidate_500PoliciesNoneMatch(b *testing.B) {
	snap := &policies.Snapshot{}
	for i := range 500 {
		p, bd := benchPolicy(fmt.Sprintf("p%03d", i), "secrets", "object.metadata.name != 'denied'")
		snap.ValidatingPolicies = append(snap.ValidatingPolicies, p)
		snap.ValidatingBindings = append(snap.ValidatingBindings, bd)
	}
	runValidate(b, snap)
}
