package rbacvalidation

import (
	"fmt"
	"math/rand"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// writesPerKind are the generated creates and updates compared per kind.
const writesPerKind = 1500

func TestGenerated(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for ki, kind := range []string{"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"} {
		g := &generator{rng: rand.New(rand.NewSource(int64(ki + 1)))}
		for i := range writesPerKind {
			obj := g.object(kind)
			w := write{name: fmt.Sprintf("%s #%d create", kind, i), obj: obj, defaulted: g.rng.Intn(8) != 0}
			if g.rng.Intn(2) == 0 {
				old := g.stored(kind)
				w = write{name: fmt.Sprintf("%s #%d update", kind, i), obj: g.changed(old), old: old, defaulted: true}
			}
			compare(t, cat, w, &c)
		}
	}
	t.Log(c.String())
	if c.refused < c.creates/4 || c.accepted < c.creates/4 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

type generator struct{ rng *rand.Rand }

func (g *generator) pick(options ...string) string { return options[g.rng.Intn(len(options))] }

// mostly returns a valid choice most of the time, else any of the others.
func (g *generator) mostly(valid string, others ...string) string {
	if g.rng.Intn(4) != 0 {
		return valid
	}
	return g.pick(others...)
}

// list is nil, empty, or one or two of options.
func (g *generator) list(options ...string) []string {
	switch g.rng.Intn(10) {
	case 0:
		return nil
	case 1:
		return []string{}
	case 2, 3:
		return []string{g.pick(options...), g.pick(options...)}
	}
	return []string{g.pick(options...)}
}

var names = []string{"", ".", "..", "a/b", "a%b", "Bad_Name", "system:controller:x", "x.y", "ok"}

func (g *generator) meta(namespaced bool) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly("r1", names...)}
	if namespaced {
		m.Namespace = g.mostly("ns1", "", "Bad_NS")
	} else if g.rng.Intn(20) == 0 {
		m.Namespace = "ns1"
	}
	if g.rng.Intn(10) == 0 {
		m.GenerateName = g.pick(".", "..", "gen-", "a/")
	}
	if g.rng.Intn(8) == 0 {
		m.Labels = map[string]string{g.pick("app", "bad key!"): g.pick("web", "bad value!")}
	}
	if g.rng.Intn(15) == 0 {
		m.Finalizers = []string{g.pick("cleanup", "example.com/x", "kubernetes")}
	}
	return m
}

func (g *generator) rule() rbacv1.PolicyRule {
	r := rbacv1.PolicyRule{Verbs: g.list("get", "list", "*", "escalate")}
	if g.rng.Intn(3) == 0 {
		r.NonResourceURLs = g.list("/healthz", "/api/*", "*")
	}
	if r.NonResourceURLs == nil || g.rng.Intn(3) == 0 {
		r.APIGroups = g.list("", "apps", "*")
		r.Resources = g.list("pods", "deployments/scale", "*")
		if g.rng.Intn(4) == 0 {
			r.ResourceNames = g.list("a", "b")
		}
	}
	if g.rng.Intn(3) != 0 && len(r.Verbs) == 0 {
		r.Verbs = []string{"get"}
	}
	return r
}

func (g *generator) rules() []rbacv1.PolicyRule {
	n := g.rng.Intn(4)
	if n == 0 && g.rng.Intn(2) == 0 {
		return nil
	}
	out := make([]rbacv1.PolicyRule, n)
	for i := range out {
		out[i] = g.rule()
	}
	return out
}

func (g *generator) selector() metav1.LabelSelector {
	switch g.rng.Intn(7) {
	case 0:
		return metav1.LabelSelector{}
	case 1:
		return metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
	case 2:
		return metav1.LabelSelector{MatchLabels: map[string]string{"agg": "bad value!"}}
	case 3:
		return metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "agg", Operator: "Foo", Values: []string{"x"}}}}
	case 4:
		return metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "agg", Operator: metav1.LabelSelectorOpIn}}}
	case 5:
		return metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "agg", Operator: metav1.LabelSelectorOpIn, Values: []string{"bad value!"}}}}
	}
	return metav1.LabelSelector{MatchLabels: map[string]string{"rbac.example.com/aggregate-to-x": "true"}}
}

func (g *generator) aggregation() *rbacv1.AggregationRule {
	if g.rng.Intn(3) != 0 {
		return nil
	}
	a := &rbacv1.AggregationRule{}
	for range g.rng.Intn(3) {
		a.ClusterRoleSelectors = append(a.ClusterRoleSelectors, g.selector())
	}
	return a
}

func (g *generator) roleRef(namespaced bool) rbacv1.RoleRef {
	kind := "ClusterRole"
	if namespaced {
		kind = g.pick("Role", "ClusterRole")
	}
	return rbacv1.RoleRef{
		APIGroup: g.mostly("", group, "rbac.GroupName", "apps"),
		Kind:     g.mostly(kind, "Role", "Type", ""),
		Name:     g.mostly("view", names...),
	}
}

func (g *generator) subject() rbacv1.Subject {
	s := rbacv1.Subject{Kind: g.mostly(g.pick(rbacv1.UserKind, rbacv1.GroupKind, rbacv1.ServiceAccountKind), "", "Bad", "user")}
	s.Name = g.mostly(g.pick("alice", "system:authenticated", "sa-1"), "", "Bad_SA", "a:b", "x.y")
	if g.rng.Intn(3) == 0 {
		s.APIGroup = g.pick(group, "", "v1", "rbac.GroupName")
	}
	if g.rng.Intn(2) == 0 {
		s.Namespace = g.pick("ns1", "", "Bad_NS")
	}
	return s
}

func (g *generator) subjects() []rbacv1.Subject {
	n := g.rng.Intn(4)
	if n == 0 {
		return nil
	}
	out := make([]rbacv1.Subject, n)
	for i := range out {
		out[i] = g.subject()
	}
	return out
}

func (g *generator) object(kind string) runtime.Object {
	switch kind {
	case "Role":
		return &rbacv1.Role{ObjectMeta: g.meta(true), Rules: g.rules()}
	case "ClusterRole":
		return &rbacv1.ClusterRole{ObjectMeta: g.meta(false), Rules: g.rules(), AggregationRule: g.aggregation()}
	case "RoleBinding":
		return &rbacv1.RoleBinding{ObjectMeta: g.meta(true), RoleRef: g.roleRef(true), Subjects: g.subjects()}
	}
	return &rbacv1.ClusterRoleBinding{ObjectMeta: g.meta(false), RoleRef: g.roleRef(false), Subjects: g.subjects()}
}

// stored is an object as stored: defaulted, with a valid name and
// namespace and a resourceVersion, and otherwise whatever was allowed when
// it was written (possibly no longer valid).
func (g *generator) stored(kind string) runtime.Object {
	obj := g.object(kind)
	m, _ := metaOf(obj)
	m.Name, m.GenerateName, m.ResourceVersion, m.Finalizers = "r1", "", "7", nil
	if kind == "Role" || kind == "RoleBinding" {
		m.Namespace = "ns1"
	} else {
		m.Namespace = ""
	}
	if g.rng.Intn(3) != 0 {
		m.Labels = nil
	}
	cat := registry.NewCatalogue()
	res, _ := cat.LookupKind(rbacv1.SchemeGroupVersion.WithKind(kind))
	res.Default(obj)
	return obj
}

// changed is an update of old: some fields kept, some changed.
func (g *generator) changed(old runtime.Object) runtime.Object {
	obj := old.DeepCopyObject()
	fresh := g.object(kindOf(old))
	m, _ := metaOf(obj)
	if g.rng.Intn(5) == 0 {
		fm, _ := metaOf(fresh)
		m.Labels = fm.Labels
	}
	if g.rng.Intn(15) == 0 {
		m.ResourceVersion = ""
	}
	if g.rng.Intn(20) == 0 {
		m.Finalizers = []string{"cleanup"}
	}
	change := g.rng.Intn(3) != 0
	switch o := obj.(type) {
	case *rbacv1.Role:
		if change {
			o.Rules = fresh.(*rbacv1.Role).Rules
		}
	case *rbacv1.ClusterRole:
		if change {
			o.Rules = fresh.(*rbacv1.ClusterRole).Rules
		}
		if g.rng.Intn(3) == 0 {
			o.AggregationRule = fresh.(*rbacv1.ClusterRole).AggregationRule
		}
	case *rbacv1.RoleBinding:
		if change {
			o.Subjects = fresh.(*rbacv1.RoleBinding).Subjects
		}
		if g.rng.Intn(4) == 0 {
			o.RoleRef = fresh.(*rbacv1.RoleBinding).RoleRef
		}
	case *rbacv1.ClusterRoleBinding:
		if change {
			o.Subjects = fresh.(*rbacv1.ClusterRoleBinding).Subjects
		}
		if g.rng.Intn(4) == 0 {
			o.RoleRef = fresh.(*rbacv1.ClusterRoleBinding).RoleRef
		}
	}
	return obj
}

func metaOf(obj runtime.Object) (*metav1.ObjectMeta, bool) {
	switch o := obj.(type) {
	case *rbacv1.Role:
		return &o.ObjectMeta, true
	case *rbacv1.ClusterRole:
		return &o.ObjectMeta, true
	case *rbacv1.RoleBinding:
		return &o.ObjectMeta, true
	case *rbacv1.ClusterRoleBinding:
		return &o.ObjectMeta, true
	}
	return nil, false
}
