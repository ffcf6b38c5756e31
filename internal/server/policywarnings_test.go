package server

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// warningRecorder keeps the warnings a client was sent.
type warningRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, text)
}

func (r *warningRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.seen
	r.seen = nil
	return out
}

// TestPolicyCostWarningsTyped: a policy's write warns of CEL costs as
// admitd lint does, typed by the schemas of the kinds it names: the
// everyday loop over a Pod's containers gets no warning, every pair of
// them and every pair of a custom resource's unbounded list (its CRD
// created just before) get AL030 naming the kind.
func TestPolicyCostWarningsTyped(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	_, cfg := startWith(t, o)
	rec := &warningRecorder{}
	cfg.WarningHandler = rec
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "routes.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "routes", Singular: "route", Kind: "Route", ListKind: "RouteList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"hosts": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}}}}}}}}}}}
	if _, err := apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	cases := []struct {
		name, group, resource, expr, want string
	}{
		{"everyday", "", "pods", "object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))", ""},
		{"pairs", "", "pods", "object.spec.containers.all(c, object.spec.containers.exists_one(d, d.name == c.name))", "for v1 Pod (sized by its schema)"},
		{"crd-pairs", "example.com", "routes", "object.spec.hosts.all(h, object.spec.hosts.exists_one(g, g == h))", "for example.com/v1 Route (sized by its schema)"},
	}
	rec.take()
	for _, c := range cases {
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: c.name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{c.group}, APIVersions: []string{"v1"}, Resources: []string{c.resource}}}}}},
				Validations: []admissionregistrationv1.Validation{{Expression: c.expr}}}}
		if _, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got := rec.take()
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("policy %s: warnings %q, want none", c.name, got)
		case c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], "AL030 (warning): ") || !strings.Contains(got[0], c.want)):
			t.Errorf("policy %s: warnings %q, want one AL030 warning containing %q", c.name, got, c.want)
		}
	}
}

var _ rest.WarningHandler = (*warningRecorder)(nil)
