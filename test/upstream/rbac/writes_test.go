package rbac

import (
	"context"
	"fmt"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	rbacinternal "k8s.io/kubernetes/pkg/apis/rbac"
	rbacv1conv "k8s.io/kubernetes/pkg/apis/rbac/v1"
	clusterrolestore "k8s.io/kubernetes/pkg/registry/rbac/clusterrole/policybased"
	clusterrolebindingstore "k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding/policybased"
	rolestore "k8s.io/kubernetes/pkg/registry/rbac/role/policybased"
	rolebindingstore "k8s.io/kubernetes/pkg/registry/rbac/rolebinding/policybased"
	"k8s.io/kubernetes/pkg/registry/rbac/validation"

	"github.com/admitd/admitd/internal/auth/rbac"
)

// fakeStore stands for the generic registry store under upstream's RBAC
// storage: a create returns the object, an update applies the update to old
// (which runs upstream's escalation check).
type fakeStore struct {
	rest.StandardStorage // nil: other methods are not called
	old                  runtime.Object
}

func (f fakeStore) Create(_ context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	return obj, nil
}

func (f fakeStore) Update(ctx context.Context, _ string, info rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc, _ rest.ValidateObjectUpdateFunc, _ bool, _ *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, err := info.UpdatedObject(ctx, f.old)
	return obj, false, err
}

// storageGetters reads p as the RBAC storage's rule resolver does, through
// the registry: NotFound errors name resources in the plural, and a Role is
// not looked up without a namespace.
type storageGetters struct{ l listers }

func (g storageGetters) GetRole(ctx context.Context, ns, name string) (*rbacv1.Role, error) {
	if ns == "" {
		return nil, apierrors.NewBadRequest("Namespace parameter required.")
	}
	r, err := g.l.roles.GetRole(ctx, ns, name)
	return r, plural(err, "roles", name)
}

func (g storageGetters) GetClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error) {
	r, err := g.l.clusterRoles.GetClusterRole(ctx, name)
	return r, plural(err, "clusterroles", name)
}

func (g storageGetters) ListRoleBindings(ctx context.Context, ns string) ([]*rbacv1.RoleBinding, error) {
	return g.l.roleBindings.ListRoleBindings(ctx, ns)
}

func (g storageGetters) ListClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	return g.l.clusterRoleBindings.ListClusterRoleBindings(ctx)
}

func plural(err error, resource, name string) error {
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(rbacv1.Resource(resource), name)
	}
	return err
}

// rbacRules sometimes gives p's roles the escalate and bind verbs.
func (g gen) rbacRules(p policy) {
	rule := func() rbacv1.PolicyRule {
		r := rbacv1.PolicyRule{Verbs: g.some([]string{"escalate", "bind", "*", "get"}, true),
			APIGroups: []string{g.pick([]string{rbacv1.GroupName, "*"})}, Resources: g.some([]string{"roles", "clusterroles", "*"}, true)}
		if g.r.IntN(3) == 0 {
			r.ResourceNames = g.some([]string{"r1", "r2", "new"}, true)
		}
		return r
	}
	for _, r := range p.roles {
		if g.r.IntN(3) == 0 {
			r.Rules = append(r.Rules, rule())
		}
	}
	for _, r := range p.clusterRoles {
		if g.r.IntN(3) == 0 {
			r.Rules = append(r.Rules, rule())
		}
	}
}

// write is one generated RBAC write: the object, the stored one (nil on
// create) and upstream's storage and our check for its kind.
type write struct {
	resource, name, namespace string
	update                    bool
	theirs                    func(ctx context.Context) error
	ours                      func(c rbac.WriteCheck) error
}

func (g gen) write(u authenticationv1.UserInfo, p policy, l listers, resolver validation.AuthorizationRuleResolver) write {
	ns := g.pick(vNamespaces)
	meta := metav1.ObjectMeta{Name: g.pick([]string{"new", "r1"}), Namespace: ns}
	update := g.r.IntN(2) == 0
	authz := l.authorizer()
	switch g.r.IntN(4) {
	case 0:
		obj := &rbacv1.Role{ObjectMeta: meta, Rules: g.rules()}
		old := oldOf(g, obj, update, func(o *rbacv1.Role) { o.Rules = g.rules() })
		return write{"roles", meta.Name, ns, update, func(ctx context.Context) error {
			return upstreamWrite(ctx, rolestore.NewStorage(fakeStore{old: internal(old)}, authz, resolver), internal(obj), update)
		}, func(c rbac.WriteCheck) error { return c.Role(context.Background(), u, obj, old) }}
	case 1:
		meta.Namespace, ns = "", ""
		obj := &rbacv1.ClusterRole{ObjectMeta: meta, Rules: g.rules()}
		if g.r.IntN(3) == 0 { // as aggregated ClusterRoles are
			obj.Rules = nil
		}
		if g.r.IntN(4) == 0 {
			obj.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "b"}}}}
		}
		old := oldOf(g, obj, update, func(o *rbacv1.ClusterRole) {
			o.Rules = g.rules()
			if g.r.IntN(2) == 0 {
				o.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{}}}
			}
		})
		return write{"clusterroles", meta.Name, ns, update, func(ctx context.Context) error {
			return upstreamWrite(ctx, clusterrolestore.NewStorage(fakeStore{old: internal(old)}, authz, resolver), internal(obj), update)
		}, func(c rbac.WriteCheck) error { return c.ClusterRole(context.Background(), u, obj, old) }}
	case 2:
		obj := &rbacv1.RoleBinding{ObjectMeta: meta, Subjects: g.subjects(), RoleRef: g.roleRef(false)}
		old := oldOf(g, obj, update, func(o *rbacv1.RoleBinding) { o.RoleRef = g.roleRef(false) })
		return write{"rolebindings", meta.Name, ns, update, func(ctx context.Context) error {
			return upstreamWrite(ctx, rolebindingstore.NewStorage(fakeStore{old: internal(old)}, authz, resolver), internal(obj), update)
		}, func(c rbac.WriteCheck) error { return c.RoleBinding(context.Background(), u, obj, old) }}
	default:
		meta.Namespace, ns = "", ""
		obj := &rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: g.subjects(), RoleRef: g.roleRef(g.r.IntN(5) > 0)}
		old := oldOf(g, obj, update, func(o *rbacv1.ClusterRoleBinding) { o.RoleRef = g.roleRef(true) })
		return write{"clusterrolebindings", meta.Name, ns, update, func(ctx context.Context) error {
			return upstreamWrite(ctx, clusterrolebindingstore.NewStorage(fakeStore{old: internal(old)}, authz, resolver), internal(obj), update)
		}, func(c rbac.WriteCheck) error { return c.ClusterRoleBinding(context.Background(), u, obj, old) }}
	}
}

// oldOf returns nil for a create; for an update, a copy of obj that differs
// in GC fields only, or that change made.
func oldOf[T interface{ DeepCopy() T }](g gen, obj T, update bool, change func(T)) T {
	var zero T
	if !update {
		return zero
	}
	old := obj.DeepCopy()
	if g.r.IntN(3) == 0 {
		change(old)
	}
	if m, ok := any(old).(metav1.Object); ok && g.r.IntN(2) == 0 {
		m.SetFinalizers([]string{"x"})
	}
	return old
}

type updater interface {
	rest.Creater
	rest.Updater
}

func upstreamWrite(ctx context.Context, s updater, obj runtime.Object, update bool) error {
	if !update {
		_, err := s.Create(ctx, obj, nil, &metav1.CreateOptions{})
		return err
	}
	_, _, err := s.Update(ctx, "x", rest.DefaultUpdatedObjectInfo(obj), nil, nil, false, &metav1.UpdateOptions{})
	return err
}

// internal converts an rbac/v1 object to upstream's internal type (nil to a
// typed nil, as the store's old object).
func internal(obj runtime.Object) runtime.Object {
	var err error
	var out runtime.Object
	switch o := obj.(type) {
	case *rbacv1.Role:
		if o == nil {
			return nil
		}
		r := &rbacinternal.Role{}
		err, out = rbacv1conv.Convert_v1_Role_To_rbac_Role(o, r, nil), r
	case *rbacv1.ClusterRole:
		if o == nil {
			return nil
		}
		r := &rbacinternal.ClusterRole{}
		err, out = rbacv1conv.Convert_v1_ClusterRole_To_rbac_ClusterRole(o, r, nil), r
	case *rbacv1.RoleBinding:
		if o == nil {
			return nil
		}
		r := &rbacinternal.RoleBinding{}
		err, out = rbacv1conv.Convert_v1_RoleBinding_To_rbac_RoleBinding(o, r, nil), r
	case *rbacv1.ClusterRoleBinding:
		if o == nil {
			return nil
		}
		r := &rbacinternal.ClusterRoleBinding{}
		err, out = rbacv1conv.Convert_v1_ClusterRoleBinding_To_rbac_ClusterRoleBinding(o, r, nil), r
	}
	if err != nil {
		panic(err)
	}
	return out
}

// TestWriteCheckGenerated: role and binding writes are refused as
// upstream's RBAC storage refuses them, with the same status.
func TestWriteCheckGenerated(t *testing.T) {
	g := newGen(17)
	count := map[string]int{}
	const n = 4000
	for i := range n {
		p := g.policy(1 + g.r.IntN(10))
		g.rbacRules(p)
		l := p.listers(t)
		resolver := validation.NewDefaultRuleResolver(storageGetters{l}, storageGetters{l}, storageGetters{l}, storageGetters{l})
		u := g.user()
		if g.r.IntN(20) == 0 {
			u.Groups = append(u.Groups, "system:masters")
		}
		w := g.write(u, p, l, resolver)

		ctx := genericapirequest.WithUser(context.Background(), upstreamUser(u))
		ctx = genericapirequest.WithNamespace(ctx, w.namespace)
		info := &genericapirequest.RequestInfo{IsResourceRequest: true, APIGroup: rbacv1.GroupName, APIVersion: "v1",
			Resource: w.resource, Namespace: w.namespace, Verb: "create"}
		if w.update { // a create is a POST to the collection: no name
			info.Name, info.Verb = w.name, "update"
		}
		ctx = genericapirequest.WithRequestInfo(ctx, info)
		snap := p.ours()
		err := w.ours(rbac.WriteCheck{Authorizer: snap, Policy: rbac.New(snap)})
		uerr := w.theirs(ctx)
		if !sameStatus(err, uerr) {
			t.Fatalf("write %d by %v: %v\nupstream: %v", i, u, err, uerr)
		}
		count[fmt.Sprint(apierrors.ReasonForError(err))]++
	}
	t.Logf("outcomes: %v", count)
	if count[""] < n/10 || count[string(metav1.StatusReasonForbidden)] < n/10 {
		t.Errorf("outcomes %v: the generator explores too little", count)
	}
}

// sameStatus: both nil, or the same code, reason and message (errors of
// resolution compared as sets).
func sameStatus(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	sa, sb := apierrors.APIStatus(nil), apierrors.APIStatus(nil)
	if !errorsAs(a, &sa) || !errorsAs(b, &sb) {
		return a.Error() == b.Error()
	}
	x, y := sa.Status(), sb.Status()
	if x.Code != y.Code || x.Reason != y.Reason || fmt.Sprint(x.Details) != fmt.Sprint(y.Details) {
		return false
	}
	m, errs, _ := strings.Cut(x.Message, "; resolution errors: ")
	um, uerrs, _ := strings.Cut(y.Message, "; resolution errors: ")
	return m == um && sameErrors(errs, uerrs)
}
