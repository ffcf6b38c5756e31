package rbacvalidation

import (
	"maps"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// The inputs of upstream's own validation tests
// (pkg/apis/rbac/validation/validation_test.go), as v1 objects. Upstream
// hands them to validation as they are; here each also runs with decoding
// defaults, as a client's write would.

const group = rbacv1.GroupName

func meta(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

func ref(apiGroup, kind, name string) rbacv1.RoleRef {
	return rbacv1.RoleRef{APIGroup: apiGroup, Kind: kind, Name: name}
}

func crb(m metav1.ObjectMeta, r rbacv1.RoleRef, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: m, RoleRef: r, Subjects: subjects}
}

func rb(m metav1.ObjectMeta, r rbacv1.RoleRef, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: m, RoleRef: r, Subjects: subjects}
}

func upstreamTableCreates() map[string]runtime.Object {
	validSubjects := func(ns string) []rbacv1.Subject {
		return []rbacv1.Subject{
			{Name: "validsaname", Namespace: ns, Kind: rbacv1.ServiceAccountKind},
			{Name: "valid@username", APIGroup: group, Kind: rbacv1.UserKind},
			{Name: "valid@groupname", APIGroup: group, Kind: rbacv1.GroupKind},
		}
	}
	goodCR := ref(group, "ClusterRole", "valid")
	goodR := ref(group, "Role", "valid")
	def := metav1.NamespaceDefault
	return map[string]runtime.Object{
		"crb valid":                crb(meta("", "master"), goodCR, validSubjects("foo")...),
		"crb bad group":            crb(meta("", "default"), ref("rbac.GroupName", "ClusterRole", "valid")),
		"crb bad kind":             crb(meta("", "default"), ref(group, "Type", "valid")),
		"crb reference role":       crb(meta("", "default"), ref(group, "Role", "valid")),
		"crb zero-length name":     crb(meta("", ""), goodCR),
		"crb bad role":             crb(meta("", "default"), ref(group, "ClusterRole", "")),
		"crb bad subject kind":     crb(meta("", "master"), goodCR, rbacv1.Subject{Name: "subject"}),
		"crb bad subject name":     crb(meta("", "master"), goodCR, rbacv1.Subject{Namespace: "foo", Name: "subject:bad", Kind: rbacv1.ServiceAccountKind}),
		"crb missing SA namespace": crb(meta("", "master"), goodCR, rbacv1.Subject{Name: "good", Kind: rbacv1.ServiceAccountKind}),
		"crb missing subject name": crb(meta("", "master"), goodCR, rbacv1.Subject{Namespace: "foo", Kind: rbacv1.ServiceAccountKind}),

		"rb valid":                 rb(meta(def, "master"), goodR, validSubjects("")...),
		"rb bad group":             rb(meta(def, "default"), ref("rbac.GroupName", "ClusterRole", "valid")),
		"rb bad kind":              rb(meta(def, "default"), ref(group, "Type", "valid")),
		"rb zero-length namespace": rb(meta("", "default"), goodR),
		"rb zero-length name":      rb(meta(def, ""), goodR),
		"rb bad role":              rb(meta(def, "default"), ref(group, "Role", "")),
		"rb bad subject kind":      rb(meta(def, "master"), goodR, rbacv1.Subject{Name: "subject"}),
		"rb bad subject name":      rb(meta(def, "master"), goodR, rbacv1.Subject{Name: "subject:bad", Kind: rbacv1.ServiceAccountKind}),
		"rb missing subject name":  rb(meta(def, "master"), goodR, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind}),

		"role zero-length namespace":   &rbacv1.Role{ObjectMeta: meta("", "default")},
		"role zero-length name":        &rbacv1.Role{ObjectMeta: meta("default", "")},
		"role valid":                   &rbacv1.Role{ObjectMeta: meta("default", "default")},
		"clusterrole valid":            &rbacv1.ClusterRole{ObjectMeta: meta("", "default")},
		"clusterrole non-resource":     &rbacv1.ClusterRole{ObjectMeta: meta("", "default"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/*"}}}},
		"role namespaced non-resource": &rbacv1.Role{ObjectMeta: meta("default", "default"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/*"}}}},
		"clusterrole non-resource no verbs": &rbacv1.ClusterRole{ObjectMeta: meta("", "default"),
			Rules: []rbacv1.PolicyRule{{Verbs: []string{}, NonResourceURLs: []string{"/*"}}}},
		"role mixed non-resource and resource": &rbacv1.Role{ObjectMeta: meta("default", "default"),
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/*"}, APIGroups: []string{"v1"}, Resources: []string{"pods"}}}},
		"role valid resource": &rbacv1.Role{ObjectMeta: meta("default", "default"),
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{"v1"}, Resources: []string{"pods"}}}},
		"role no api group": &rbacv1.Role{ObjectMeta: meta("default", "default"),
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, Resources: []string{"pods"}}}},
		"role no resources": &rbacv1.Role{ObjectMeta: meta("default", "default"),
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{"v1"}}}},
	}
}

// upstreamTableUpdates are TestValidateRoleBindingUpdate's: an unchanged
// binding and one whose roleRef changed.
func upstreamTableUpdates() map[string][2]runtime.Object {
	m := metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "master", ResourceVersion: "1"}
	old := rb(m, ref(group, "Role", "valid"))
	return map[string][2]runtime.Object{
		"rb unchanged":  {rb(m, ref(group, "Role", "valid")), old},
		"rb changedRef": {rb(m, ref(group, "Role", "changed")), old},
	}
}

// edgeUpdates are the update cases of admitd's unit tests whose outcome
// depends on the old object: declarative rules skipping unchanged lists,
// and selectors allowed to keep label values that are no longer valid.
func edgeUpdates() map[string][2]runtime.Object {
	noVerbs := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}
	bad := &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"bad value!"}}}}}}
	m := metav1.ObjectMeta{Namespace: "default", Name: "r", ResourceVersion: "1"}
	labelled := *m.DeepCopy()
	labelled.Labels = map[string]string{"a": "b"}
	cm := metav1.ObjectMeta{Name: "c", ResourceVersion: "1"}
	user := []rbacv1.Subject{{Kind: "User", Name: "alice", APIGroup: group}}
	return map[string][2]runtime.Object{
		"rules kept without verbs": {&rbacv1.Role{ObjectMeta: labelled, Rules: noVerbs}, &rbacv1.Role{ObjectMeta: m, Rules: noVerbs}},
		"rules changed without verbs": {&rbacv1.Role{ObjectMeta: m, Rules: append(noVerbs, rbacv1.PolicyRule{Verbs: []string{"get"}})},
			&rbacv1.Role{ObjectMeta: m, Rules: noVerbs}},
		"selector kept":          {&rbacv1.ClusterRole{ObjectMeta: cm, AggregationRule: bad}, &rbacv1.ClusterRole{ObjectMeta: cm, AggregationRule: bad}},
		"selector made invalid":  {&rbacv1.ClusterRole{ObjectMeta: cm, AggregationRule: bad}, &rbacv1.ClusterRole{ObjectMeta: cm}},
		"subject name removed":   {rb(m, ref(group, "ClusterRole", "view"), rbacv1.Subject{Kind: "User"}), rb(m, ref(group, "ClusterRole", "view"), user...)},
		"crb roleRef defaulted":  {crb(cm, ref("", "ClusterRole", "edit")), crb(cm, ref(group, "ClusterRole", "view"))},
		"crb kept, name removed": {crb(cm, ref(group, "ClusterRole", "")), crb(cm, ref(group, "ClusterRole", ""))},
	}
}

func TestUpstreamTables(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for name, obj := range upstreamTableCreates() {
		for _, defaulted := range []bool{false, true} {
			compare(t, cat, write{name: name, obj: obj, defaulted: defaulted}, &c)
		}
	}
	updates := upstreamTableUpdates()
	maps.Copy(updates, edgeUpdates())
	for name, pair := range updates {
		for _, defaulted := range []bool{false, true} {
			compare(t, cat, write{name: name, obj: pair[0], old: pair[1], defaulted: defaulted}, &c)
		}
	}
	t.Log(c.String())
}
