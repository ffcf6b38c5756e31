package registry

// Expected values follow upstream pkg/apis/rbac/v1/defaults.go,
// pkg/apis/rbac/validation and the declarative rules of k8s.io/api/rbac/v1
// as kube-apiserver 1.37.2 enforces them; test/upstream/rbacvalidation
// compares the two over generated objects.

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/auth/rbac/bootstrap"
)

func TestDefaultRBACBindings(t *testing.T) {
	subjects := func(groups ...string) []rbacv1.Subject {
		out := []rbacv1.Subject{{Kind: "User", Name: "u"}, {Kind: "Group", Name: "g"},
			{Kind: "ServiceAccount", Name: "sa", Namespace: "ns"}, {Kind: "Robot", Name: "r"}, {Kind: "User", Name: "v", APIGroup: "x"}}
		for i, g := range groups {
			out[i].APIGroup = g
		}
		return out
	}
	want := subjects(rbacv1.GroupName, rbacv1.GroupName, "", "", "x")
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}
	for _, tc := range []struct {
		name    string
		in, out runtime.Object
	}{{
		name: "RoleBinding.rbac.authorization.k8s.io",
		in:   &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: subjects()},
		out:  &rbacv1.RoleBinding{RoleRef: ref, Subjects: want},
	}, {
		name: "ClusterRoleBinding.rbac.authorization.k8s.io",
		in:   &rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: subjects()},
		out:  &rbacv1.ClusterRoleBinding{RoleRef: ref, Subjects: want},
	}, {
		name: "ClusterRoleBinding.rbac.authorization.k8s.io/kept",
		in:   &rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: "other", Kind: "ClusterRole", Name: "view"}},
		out:  &rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: "other", Kind: "ClusterRole", Name: "view"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			resourceFor(t, tc.in).Default(tc.in)
			if !apiequality.Semantic.DeepEqual(tc.in, tc.out) {
				t.Errorf("defaulted %s = %+v, want %+v", tc.name, tc.in, tc.out)
			}
		})
	}
}

func rbacMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "1"}
}

func viewRef(kind string) rbacv1.RoleRef {
	return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: "view"}
}

func TestValidateRBACCreate(t *testing.T) {
	podsRule := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	for _, tc := range []struct {
		name string
		obj  runtime.Object
		want string // "" means valid
	}{
		{"valid Role", &rbacv1.Role{ObjectMeta: rbacMeta("default", "r"), Rules: []rbacv1.PolicyRule{podsRule}}, ""},
		{"Role rule without groups and resources", &rbacv1.Role{ObjectMeta: rbacMeta("default", "r"),
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}}}},
			`[rules[0].apiGroups: Required value: resource rules must supply at least one api group, rules[0].resources: Required value: resource rules must supply at least one resource]`},
		{"Role rule with non-resource URLs", &rbacv1.Role{ObjectMeta: rbacMeta("default", "r"),
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}, Resources: []string{"pods"}}}},
			`[rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs, rules[0].nonResourceURLs: Invalid value: ["/healthz"]: rules cannot apply to both regular resources and non-resource URLs]`},
		// The declarative rule reports missing verbs last, without detail.
		{"Role rules without verbs", &rbacv1.Role{ObjectMeta: rbacMeta("default", "r"),
			Rules: []rbacv1.PolicyRule{{Resources: []string{"pods"}, APIGroups: []string{""}}, {}}},
			`[rules[1].apiGroups: Required value: resource rules must supply at least one api group, rules[1].resources: Required value: resource rules must supply at least one resource, rules[0].verbs: Required value, rules[1].verbs: Required value]`},
		{"ClusterRole with non-resource URLs", &rbacv1.ClusterRole{ObjectMeta: rbacMeta("", "c"),
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}}}, ""},
		{"ClusterRole aggregation without selectors", &rbacv1.ClusterRole{ObjectMeta: rbacMeta("", "c"), AggregationRule: &rbacv1.AggregationRule{}},
			`aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil`},
		{"ClusterRole aggregation with a bad operator", &rbacv1.ClusterRole{ObjectMeta: rbacMeta("", "c"), AggregationRule: &rbacv1.AggregationRule{
			ClusterRoleSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near", Values: []string{"b"}}}}}}},
			`[aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator, aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector.]`},
		{"Role named '..'", &rbacv1.Role{ObjectMeta: rbacMeta("default", "..")}, `metadata.name: Invalid value: "..": may not be '..'`},
		{"Role generateName '.'", &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: ".x1", GenerateName: "."}},
			`metadata.generateName: Invalid value: ".": may not be '.'`},
		{"valid RoleBinding", &rbacv1.RoleBinding{ObjectMeta: rbacMeta("default", "b"), RoleRef: viewRef("ClusterRole"),
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}, {Kind: "ServiceAccount", Name: "default"}}}, ""},
		{"RoleBinding roleRef", &rbacv1.RoleBinding{ObjectMeta: rbacMeta("default", "b"),
			RoleRef: rbacv1.RoleRef{APIGroup: "apps", Kind: "Deployment", Name: "a/b"}},
			`[roleRef.apiGroup: Unsupported value: "apps": supported values: "rbac.authorization.k8s.io", roleRef.kind: Unsupported value: "Deployment": supported values: "Role", "ClusterRole", roleRef.name: Invalid value: "a/b": may not contain '/']`},
		{"RoleBinding subjects", &rbacv1.RoleBinding{ObjectMeta: rbacMeta("default", "b"), RoleRef: viewRef("Role"),
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "Bad_SA", APIGroup: "v1"}, {Kind: "Group", Name: "g", APIGroup: "x"}, {Kind: "Robot", Name: "r"}}},
			`[subjects[0].name: Invalid value: "Bad_SA": ` + dns1123SubdomainMsg + `, subjects[0].apiGroup: Unsupported value: "v1": supported values: "", subjects[1].apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io", subjects[2].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"]`},
		// Declarative rules: subject names, then the roleRef's, last.
		{"RoleBinding missing names", &rbacv1.RoleBinding{ObjectMeta: rbacMeta("default", "b"), RoleRef: rbacv1.RoleRef{Kind: "Role"},
			Subjects: []rbacv1.Subject{{Kind: "Robot"}}},
			`[subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group", subjects[0].name: Required value, roleRef.name: Required value]`},
		{"ClusterRoleBinding to a Role", &rbacv1.ClusterRoleBinding{ObjectMeta: rbacMeta("", "b"), RoleRef: viewRef("Role")},
			`roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`},
		{"ClusterRoleBinding service account without namespace", &rbacv1.ClusterRoleBinding{ObjectMeta: rbacMeta("", "b"), RoleRef: viewRef("ClusterRole"),
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default"}}},
			`subjects[0].namespace: Required value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

const dns1123SubdomainMsg = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`

func TestValidateRBACUpdate(t *testing.T) {
	noVerbs := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}
	badSelector := &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"bad value!"}}}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: rbacMeta("default", "b"), RoleRef: viewRef("ClusterRole"),
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice", APIGroup: rbacv1.GroupName}}}
	for _, tc := range []struct {
		name     string
		obj, old runtime.Object
		want     string
	}{
		{"roleRef changed", &rbacv1.RoleBinding{ObjectMeta: rbacMeta("default", "b"), RoleRef: viewRef("Role"), Subjects: binding.Subjects}, binding,
			`roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"view"}: field is immutable`},
		{"ClusterRoleBinding roleRef changed", &rbacv1.ClusterRoleBinding{ObjectMeta: rbacMeta("", "b"), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "edit"}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: rbacMeta("", "b"), RoleRef: viewRef("ClusterRole")},
			`roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: field is immutable`},
		{"subjects changed", &rbacv1.RoleBinding{ObjectMeta: rbacMeta("default", "b"), RoleRef: viewRef("ClusterRole"),
			Subjects: []rbacv1.Subject{{Kind: "User"}}}, binding, `subjects[0].name: Required value`},
		// Unchanged rules are not checked declaratively: the handwritten
		// error stands, with its detail.
		{"rules kept without verbs", &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "r", ResourceVersion: "2", Labels: map[string]string{"a": "b"}}, Rules: noVerbs},
			&rbacv1.Role{ObjectMeta: rbacMeta("default", "r"), Rules: noVerbs},
			`rules[0].verbs: Required value: verbs must contain at least one value`},
		{"rules changed without verbs", &rbacv1.Role{ObjectMeta: rbacMeta("default", "r"), Rules: append(noVerbs, rbacv1.PolicyRule{Verbs: []string{"get"}})},
			&rbacv1.Role{ObjectMeta: rbacMeta("default", "r"), Rules: noVerbs},
			`[rules[1].apiGroups: Required value: resource rules must supply at least one api group, rules[1].resources: Required value: resource rules must supply at least one resource, rules[0].verbs: Required value]`},
		// A value the old role had is let through the selector's own
		// check, not the building of the selector.
		{"selector kept with a label value now invalid", &rbacv1.ClusterRole{ObjectMeta: rbacMeta("", "c"), AggregationRule: badSelector},
			&rbacv1.ClusterRole{ObjectMeta: rbacMeta("", "c"), AggregationRule: badSelector},
			`aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector.`},
		{"selector made invalid", &rbacv1.ClusterRole{ObjectMeta: rbacMeta("", "c"), AggregationRule: badSelector},
			&rbacv1.ClusterRole{ObjectMeta: rbacMeta("", "c")},
			`[aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values[0]: Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector.]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(updateErrors(t, tc.obj, tc.old)); got != tc.want {
				t.Errorf("update errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestBootstrapPolicyValid: every object of the bootstrap policy, which the
// server writes at start-up without the API, passes validation.
func TestBootstrapPolicyValid(t *testing.T) {
	p, err := bootstrap.Load()
	if err != nil {
		t.Fatal(err)
	}
	objs := p.Objects()
	for _, crb := range p.ClusterRoleBindingsToSplit {
		objs = append(objs, crb.DeepCopy())
	}
	if len(objs) < 100 {
		t.Fatalf("bootstrap policy has only %d objects", len(objs))
	}
	for _, obj := range objs {
		if errs := createErrors(t, obj); len(errs) > 0 {
			t.Errorf("bootstrap %s is invalid: %v", metaName(obj), errs)
		}
	}
}

func metaName(obj runtime.Object) string {
	return obj.GetObjectKind().GroupVersionKind().Kind + " " + objectMeta(obj).GetNamespace() + "/" + objectMeta(obj).GetName()
}

func TestRBACCreateOnUpdate(t *testing.T) {
	for _, obj := range []runtime.Object{&rbacv1.Role{}, &rbacv1.ClusterRole{}, &rbacv1.RoleBinding{}, &rbacv1.ClusterRoleBinding{}} {
		if r := resourceFor(t, obj); !r.AllowCreateOnUpdate {
			t.Errorf("%s: AllowCreateOnUpdate = false, want true (a PUT of a missing object creates it)", r.Resource)
		}
	}
}
