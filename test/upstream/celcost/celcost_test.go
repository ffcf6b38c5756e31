package celcost

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	crdcel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	k8sscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	admissionregistrationinternalv1 "k8s.io/kubernetes/pkg/apis/admissionregistration/v1"
	vapvalidation "k8s.io/kubernetes/pkg/apis/admissionregistration/validation"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/openapi"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/lint"
)

// routeSchema is the openAPIV3Schema of the Route CRD the expressions
// read: lists and maps with and without bounds.
const routeSchema = `
type: object
properties:
  spec:
    type: object
    properties:
      hosts: {type: array, items: {type: string}}
      boundedHosts: {type: array, maxItems: 16, items: {type: string, maxLength: 253}}
      manyHosts: {type: array, maxItems: 1200000, items: {type: string}}
      rules:
        type: array
        items:
          type: object
          required: [name]
          properties:
            name: {type: string}
            paths: {type: array, items: {type: string}}
      labels: {type: object, additionalProperties: {type: string}}
      weights: {type: array, items: {type: integer}}
`

// routeExpressions are read by a policy over routes (object) and, with
// object replaced by self, by a validation rule at the root of the CRD.
var routeExpressions = []string{
	"object.spec.hosts.all(h, h.endsWith('.example.com'))",
	"object.spec.hosts.all(h, h.contains('internal'))",
	"object.spec.hosts.all(h, h != 'localhost' && h != 'example.com')",
	"object.spec.hosts.all(h, h != 'localhost' && h != 'example.com' && h.size() > 3)",
	"object.spec.weights.all(w, w >= 0)",
	"object.spec.manyHosts.all(h, h != 'localhost' && h != 'example.com')",
	"object.spec.hosts.all(h, h != 'localhost' && h != 'example.com' && h != 'x')",
	"object.spec.hosts.all(h, h in ['a', 'b'])",
	"object.spec.hosts.all(h, object.spec.hosts.exists_one(g, g == h))",
	"object.spec.boundedHosts.all(h, object.spec.boundedHosts.exists_one(g, g == h))",
	"object.spec.boundedHosts.all(h, h.matches('^[a-z.]+$'))",
	"object.spec.rules.all(r, r.name != '')",
	"object.spec.rules.all(r, r.paths.all(p, p.startsWith('/')))",
	"object.spec.rules.all(r, r.name.startsWith('r-') && r.name.size() < 64)",
	"object.spec.rules.exists(r, r.name == 'default')",
	"object.spec.labels.all(k, k.startsWith('example.com/'))",
	"object.spec.labels.all(k, object.spec.labels[k].size() < 64)",
	"object.spec.weights.all(w, w >= 0 && w <= 100)",
	"object.spec.weights.map(w, w * 2).filter(w, w > 10).size() < 5",
	"object.spec.hosts.size() <= 10",
	"object.metadata.name.startsWith('route-')",
}

// TestRouteExpressionsAsUpstream checks, for every expression, that AL030
// reports exactly what upstream's estimator says of the same expression as
// a CRD validation rule: a warning when upstream's CRD validation refuses
// it for its estimated cost, info when it accepts it at
// 90% of the limit or more, nothing below; and that the finding names
// upstream's estimated cost.
func TestRouteExpressionsAsUpstream(t *testing.T) {
	counts := map[string]int{}
	for _, expr := range routeExpressions {
		upCost, refused := upstreamRule(t, strings.ReplaceAll(expr, "object.", "self."))
		sev, msg := lintRoute(t, expr)
		want := ""
		switch {
		case refused:
			want = "warning"
		case float64(upCost) >= 0.9*float64(crdvalidation.StaticEstimatedCostLimit):
			want = "info"
		}
		counts[want]++
		if sev != want {
			t.Errorf("AL030 of %s = %q, want %q (upstream: estimated cost %d, refused %v)\n%s", expr, sev, want, upCost, refused, msg)
			continue
		}
		named := fmt.Sprintf("cost of %d ", upCost)
		if upCost == math.MaxUint64 {
			named = "cost of unbounded "
		}
		if sev != "" && !strings.Contains(msg, named) {
			t.Errorf("AL030 of %s does not name upstream's estimated cost %d: %s", expr, upCost, msg)
		}
	}
	t.Logf("%d expressions: %d refused by upstream (AL030 warning), %d near (info), %d clean", len(routeExpressions), counts["warning"], counts["info"], counts[""])
}

// upstreamRule returns the estimated cost apiextensions-apiserver gives
// rule at the root of the Route schema, and whether its CRD validation
// refuses the CRD for the rule's cost.
func upstreamRule(t *testing.T, rule string) (uint64, bool) {
	t.Helper()
	crd := routeCRD(t)
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations = apiextensionsv1.ValidationRules{{Rule: rule}}
	crd.Status.StoredVersions = []string{"v1"}
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		t.Fatal(err)
	}
	refused := false
	for _, e := range crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal) {
		// "estimated rule cost exceeds budget by factor of …", and past
		// 100,000,000 the CRD's total too
		if !strings.Contains(e.Detail, "estimated rule cost") {
			t.Fatalf("upstream refuses the CRD of rule %s for another reason: %v", rule, e)
		}
		refused = true
	}
	ss, err := structuralschema.NewStructural(internal.Spec.Validation.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	results, err := crdcel.Compile(ss, model.SchemaDeclType(ss, true), celconfig.PerCallLimit,
		environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), crdcel.NewExpressionsEnvLoader())
	if err != nil || len(results) != 1 || results[0].Error != nil {
		t.Fatalf("upstream compiles rule %s: %v %+v", rule, err, results)
	}
	return results[0].MaxCost, refused
}

func routeCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	props := &apiextensionsv1.JSONSchemaProps{}
	if err := yaml.Unmarshal([]byte(routeSchema), props); err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1TypeMeta("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
		ObjectMeta: objectMeta("routes.example.com"),
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "routes", Singular: "route", Kind: "Route", ListKind: "RouteList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: props}}},
		},
	}
}

// lintRoute lints the Route CRD and a policy over routes with expr, as
// admitd lint does, and returns AL030's severity ("" for none) and message.
func lintRoute(t *testing.T, expr string) (string, string) {
	t.Helper()
	s := &lint.Set{}
	if err := s.Add(routeCRD(t), "crd"); err != nil {
		t.Fatal(err)
	}
	return al030(t, s, admitdSchemas(), policy("example.com", "routes", expr))
}

// builtinExpressions are read by policies over built-in kinds.
var builtinExpressions = []struct{ group, resource, expr string }{
	{"", "pods", "object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))"},
	{"", "pods", "object.spec.containers.all(c, c.image.startsWith('registry.example.com/') && c.name != 'debug')"},
	{"", "pods", "object.spec.containers.all(c, c.image != 'a' && c.name != 'debug')"},
	{"", "pods", "object.spec.containers.all(c, !has(c.env) || c.env.all(e, e.name != 'SECRET'))"},
	{"", "pods", "object.spec.containers.all(c, c.image.contains('latest'))"},
	{"", "pods", "object.spec.containers.all(c, object.spec.containers.exists_one(d, d.name == c.name))"},
	{"", "pods", "!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath))"},
	{"", "pods", "object.metadata.labels.all(k, k.size() < 64)"},
	{"apps", "deployments", "object.spec.template.spec.containers.exists(c, c.name == 'sidecar')"},
	{"apps", "deployments", "object.spec.replicas <= 10"},
	{"", "services", "object.spec.ports.all(p, p.port != 22)"},
	{"", "configmaps", "!has(object.data) || object.data.all(k, k.size() < 253)"},
	{"networking.k8s.io", "ingresses", "object.spec.rules.all(r, r.http.paths.all(p, p.path.startsWith('/')))"},
}

// TestBuiltinKindsAsUpstream checks that AL030 types built-in kinds as
// upstream does: the same findings, with the same estimated costs, whether
// the schemas come from admitd's generated OpenAPI or from upstream's own
// definitions through the resolver kube-controller-manager's type checker
// uses; and that upstream's validation accepts every policy.
func TestBuiltinKindsAsUpstream(t *testing.T) {
	up := upstreamSchemas{resolver.NewDefinitionsSchemaResolver(generatedopenapi.GetOpenAPIDefinitions, k8sscheme.Scheme, apiextensionsscheme.Scheme)}
	flagged := 0
	for _, c := range builtinExpressions {
		version := "v1"
		p := policy(c.group, c.resource, c.expr)
		gotSev, got := al030(t, &lint.Set{}, admitdSchemas(), p)
		wantSev, want := al030(t, &lint.Set{}, up, p)
		if gotSev != wantSev || got != want {
			t.Errorf("AL030 of %s over %s/%s:\nadmitd's schemas:   %s %s\nupstream's schemas: %s %s", c.expr, c.group, version, gotSev, got, wantSev, want)
		}
		if gotSev != "" {
			flagged++
		}
	}
	t.Logf("%d expressions over built-in kinds, %d flagged, the same with upstream's schemas", len(builtinExpressions), flagged)
}

// TestUpstreamAcceptsEveryPolicy: kube-apiserver never refuses a
// ValidatingAdmissionPolicy for its cost, whatever AL030 says of it.
func TestUpstreamAcceptsEveryPolicy(t *testing.T) {
	var policies []*admissionregistrationv1.ValidatingAdmissionPolicy
	for _, e := range routeExpressions {
		policies = append(policies, policy("example.com", "routes", e))
	}
	for _, c := range builtinExpressions {
		policies = append(policies, policy(c.group, c.resource, c.expr))
	}
	for _, p := range policies {
		admissionregistrationinternalv1.SetObjectDefaults_ValidatingAdmissionPolicy(p)
		internal := &admissionregistration.ValidatingAdmissionPolicy{}
		if err := admissionregistrationinternalv1.Convert_v1_ValidatingAdmissionPolicy_To_admissionregistration_ValidatingAdmissionPolicy(p, internal, nil); err != nil {
			t.Fatal(err)
		}
		if errs := vapvalidation.ValidateValidatingAdmissionPolicy(internal); len(errs) > 0 {
			t.Errorf("upstream refuses the policy of %s: %v", p.Spec.Validations[0].Expression, errs)
		}
	}
}

// al030 lints s with p added and returns AL030's severity and message.
func al030(t *testing.T, s *lint.Set, schemas lint.Schemas, p *admissionregistrationv1.ValidatingAdmissionPolicy) (string, string) {
	t.Helper()
	if err := s.Add(p, "policy"); err != nil {
		t.Fatal(err)
	}
	for _, f := range lint.Run(context.Background(), s, lint.Options{Schemas: schemas}) {
		switch f.ID {
		case lint.CELNearCostLimit:
			return f.Severity.String(), f.Message
		case lint.CELCompileError:
			t.Fatalf("AL031: %s", f.Message)
		}
	}
	return "", ""
}

func policy(group, resource, expr string) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1TypeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
		ObjectMeta: objectMeta("p"),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: expr}},
		},
	}
}

// admitdSchemas are the built-in kinds and schemas admitd lint uses.
func admitdSchemas() lint.Schemas {
	cat := registry.NewCatalogue()
	return openapi.PolicySchemas{Service: openapi.New(cat, openapi.Options{}), Catalogue: cat}
}

// upstreamSchemas resolves built-in kinds with upstream's definitions;
// resources map to kinds as admitd's catalogue maps them.
type upstreamSchemas struct {
	r *resolver.DefinitionsSchemaResolver
}

func (u upstreamSchemas) KindsFor(gvr schema.GroupVersionResource) []schema.GroupVersionKind {
	if r, ok := registry.NewCatalogue().Lookup(gvr); ok {
		return []schema.GroupVersionKind{r.GroupVersionKind()}
	}
	return nil
}

func (u upstreamSchemas) ResolveSchema(gvk schema.GroupVersionKind) *spec.Schema {
	s, err := u.r.ResolveSchema(gvk)
	if err != nil {
		return nil
	}
	return s
}

func metav1TypeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
