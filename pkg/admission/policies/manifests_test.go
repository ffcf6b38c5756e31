package policies_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/apis/admissionregistration"
)

const staticPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: guard.static.k8s.io}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}
  validations:
  - expression: "!object.metadata.name.startsWith('forbidden')"
    message: static says no
`

const staticBinding = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: guard-binding.static.k8s.io}
spec:
  policyName: guard.static.k8s.io
  validationActions: [Deny]
`

// newStatic builds the validating plugin over a manifest directory holding
// files, and an API snapshot.
func newStatic(t *testing.T, files map[string]string, snap *policies.Snapshot) (*policies.Validating, error) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "apiVersion: apiserver.config.k8s.io/v1\nkind: ValidatingAdmissionPolicyConfiguration\nstaticManifestsDir: " + dir + "\n"
	store := newObjectStore()
	store.add(namespace("bench", nil))
	return policies.NewValidating(policies.Options{Source: policies.StaticSource{Snapshot: snap}, Params: store,
		DefaultConfiguration: admissionregistration.Default},
		admission.PluginContext{Namespaces: store, Schema: fakeSchema{}, Config: strings.NewReader(cfg)})
}

func TestStaticManifestErrors(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"empty directory", nil, ""},
		{"policy and binding", map[string]string{"a.yaml": staticPolicy + "---\n" + staticBinding}, ""},
		{"list", map[string]string{"a.yaml": "apiVersion: v1\nkind: List\nitems:\n- " +
			strings.ReplaceAll(strings.TrimSpace(staticPolicy), "\n", "\n  ") + "\n- " +
			strings.ReplaceAll(strings.TrimSpace(staticBinding), "\n", "\n  ") + "\n"}, ""},
		{"ignored extension", map[string]string{"a.txt": "not yaml"}, ""},
		{"missing policy", map[string]string{"b.yaml": staticBinding},
			`binding "guard-binding.static.k8s.io" references policy "guard.static.k8s.io" which does not exist in the manifest directory`},
		{"duplicate", map[string]string{"a.yaml": staticPolicy, "b.yaml": staticPolicy},
			`error loading b.yaml: duplicate name "guard.static.k8s.io" found in file "b.yaml" (previously seen in "a.yaml")`},
		{"other kind", map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"},
			"error loading a.yaml: unsupported resource type v1, Kind=ConfigMap"},
		{"no suffix", map[string]string{"a.yaml": strings.Replace(staticPolicy, "guard.static.k8s.io", "guard", 1)},
			`error loading a.yaml: "guard" in file "a.yaml" must have a name ending with ".static.k8s.io"`},
		{"paramKind", map[string]string{"a.yaml": staticPolicy + "  paramKind: {apiVersion: v1, kind: ConfigMap}\n"},
			`error loading a.yaml: ValidatingAdmissionPolicy "guard.static.k8s.io": spec.paramKind is not supported for static manifests`},
		{"paramRef", map[string]string{"a.yaml": staticPolicy + "---\n" + staticBinding + "  paramRef: {name: x, parameterNotFoundAction: Deny}\n"},
			`error loading a.yaml: binding "guard-binding.static.k8s.io": spec.paramRef is not supported for static manifests`},
		{"policyName suffix", map[string]string{"a.yaml": strings.Replace(staticBinding, "policyName: guard.static.k8s.io", "policyName: guard", 1)},
			`error loading a.yaml: binding "guard-binding.static.k8s.io": spec.policyName "guard" must end with ".static.k8s.io"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := newStatic(t, c.files, nil)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("NewValidating = %v, want no error", err)
			case c.want != "" && (err == nil || !strings.HasSuffix(err.Error(), c.want)):
				t.Fatalf("NewValidating = %v, want an error ending %q", err, c.want)
			}
		})
	}
}

// TestStaticPoliciesGuardThePolicyAPI checks static hooks run first and are
// the only ones that see requests on policies themselves.
func TestStaticPoliciesGuardThePolicyAPI(t *testing.T) {
	apiPolicy, apiBinding := benchPolicy("api", "configmaps", "false")
	apiPolicy.Spec.Validations[0].Message = "api says no"
	v, err := newStatic(t, map[string]string{"a.yaml": staticPolicy + "---\n" + staticBinding}, &policies.Snapshot{
		ValidatingPolicies: []*admissionregistrationv1.ValidatingAdmissionPolicy{apiPolicy},
		ValidatingBindings: []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{apiBinding}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := benchConfigMap()
	a.Record = admission.NewRecord()
	a.Object.(metav1.Object).SetName("forbidden-cm")
	a.Name = "forbidden-cm"
	if err := v.Validate(ctx, a); err == nil || !strings.Contains(err.Error(), "'guard.static.k8s.io' with binding 'guard-binding.static.k8s.io' denied request: static says no") {
		t.Errorf("Validate(forbidden-cm) = %v, want the static denial first", err)
	}
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{TypeMeta: metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "forbidden-policy"}}
	pa := &admission.Attributes{Name: "forbidden-policy", Operation: admission.Create, Object: vap, Record: admission.NewRecord(),
		Resource: admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies"),
		Kind:     admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicy")}
	if err := v.Validate(ctx, pa); err == nil || !strings.Contains(err.Error(), "static says no") {
		t.Errorf("Validate(policy) = %v, want the static denial", err)
	}
}
