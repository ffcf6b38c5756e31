package policies_test

import (
	"reflect"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/pkg/admission/policies"
)

// deploymentSchema is the part of apps/v1 Deployment the vectors read.
func deploymentSchema() *spec.Schema {
	obj := func(props map[string]spec.Schema) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: props}}
	}
	s := obj(map[string]spec.Schema{
		"apiVersion": *spec.StringProperty(),
		"kind":       *spec.StringProperty(),
		"metadata":   obj(map[string]spec.Schema{"name": *spec.StringProperty()}),
		"spec":       obj(map[string]spec.Schema{"replicas": *spec.Int64Property()}),
	})
	return &s
}

type schemas map[schema.GroupVersionKind]*spec.Schema

type upstreamSchemas map[schema.GroupVersionKind]*spec.Schema

func (s upstreamSchemas) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	if sc, ok := s[gvk]; ok {
		return sc, nil
	}
	return nil, resolver.ErrSchemaNotFound
}

func (s schemas) ResolveSchema(gvk schema.GroupVersionKind) *spec.Schema { return s[gvk] }

var deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

func kindsFor(gvr schema.GroupVersionResource) []schema.GroupVersionKind {
	if gvr == (schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}) {
		return []schema.GroupVersionKind{deploymentGVK}
	}
	return nil
}

func TestTypeChecker(t *testing.T) {
	withFoo := deploymentSchema()
	withFoo.Properties["foo"] = *spec.Int64Property()
	cases := []struct {
		name        string
		resources   []string
		schema      *spec.Schema
		validations []admissionregistrationv1.Validation
		variables   []admissionregistrationv1.Variable
		want        map[string]string // fieldRef -> substring
	}{
		{name: "undefined field", validations: []admissionregistrationv1.Validation{{Expression: "object.foo == 'bar'"}},
			want: map[string]string{"spec.validations[0].expression": "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'foo'"}},
		{name: "second validation and messageExpression", validations: []admissionregistrationv1.Validation{
			{Expression: "object.spec.replicas > 1", MessageExpression: "object.foo + 114514"}, {Expression: "object.bar == 'foo'"}},
			want: map[string]string{"spec.validations[0].messageExpression": "undefined field 'foo'", "spec.validations[1].expression": "undefined field 'bar'"}},
		{name: "authorizer misuse", validations: []admissionregistrationv1.Validation{
			{Expression: "authorizer.allowed()"}, {Expression: "authorizer.group('').resource('endpoints').check('create').allowed()"}},
			want: map[string]string{"spec.validations[0].expression": "found no matching overload for 'allowed' applied to 'kubernetes.authorization.Authorizer"}},
		{name: "typed variable", schema: withFoo, variables: []admissionregistrationv1.Variable{{Name: "name", Expression: "'something'"}},
			validations: []admissionregistrationv1.Validation{{Expression: "variables.name == object.foo"}},
			want:        map[string]string{"spec.validations[0].expression": "found no matching overload for '_==_' applied to '(string, int)'"}},
		{name: "variable with a type error degrades to dyn", schema: withFoo,
			variables:   []admissionregistrationv1.Variable{{Name: "name", Expression: "object.foo == 'str'"}},
			validations: []admissionregistrationv1.Validation{{Expression: "variables.name == object.foo"}}},
		{name: "wildcard rules are not checked", resources: []string{"*"},
			validations: []admissionregistrationv1.Validation{{Expression: "object.foo == 'bar'"}}},
		{name: "subresources are not checked", resources: []string{"deployments/scale"},
			validations: []admissionregistrationv1.Validation{{Expression: "object.foo == 'bar'"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.schema
			if s == nil {
				s = deploymentSchema()
			}
			res := c.resources
			if res == nil {
				res = []string{"deployments"}
			}
			p := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{"*"},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: res}}}}},
				Validations: c.validations, Variables: c.variables}}
			tc := &policies.TypeChecker{Schemas: schemas{deploymentGVK: s}, KindsFor: kindsFor}
			got := tc.Check(p)
			mapper := meta.NewDefaultRESTMapper(nil)
			mapper.Add(deploymentGVK, meta.RESTScopeNamespace)
			upstream := (&validating.TypeChecker{SchemaResolver: upstreamSchemas{deploymentGVK: s}, RestMapper: mapper}).Check(p)
			if !reflect.DeepEqual(got, upstream) {
				t.Errorf("Check = %+v\nupstream %+v", got, upstream)
			}
			if len(got) != len(c.want) {
				t.Fatalf("Check = %+v, want %d warnings", got, len(c.want))
			}
			for _, w := range got {
				if !strings.Contains(w.Warning, c.want[w.FieldRef]) || c.want[w.FieldRef] == "" {
					t.Errorf("warning %s = %q, want it to contain %q", w.FieldRef, w.Warning, c.want[w.FieldRef])
				}
			}
		})
	}
}
