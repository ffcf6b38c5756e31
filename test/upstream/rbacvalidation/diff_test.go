// Package rbacvalidation compares admitd's RBAC strategies
// (internal/registry: decoding defaults, then the preparation and
// validation of a create or update of Roles, ClusterRoles, RoleBindings
// and ClusterRoleBindings) with kube-apiserver's: v1 defaulting
// (pkg/apis/rbac/v1), then the registry strategies of pkg/registry/rbac
// through k8s.io/apiserver's rest.ValidateCreate and rest.ValidateUpdate,
// which add the common metadata checks and the declarative validation of
// 1.37 (DeclarativeValidationBeta on, as by default), on the internal
// objects kube-apiserver decodes.
//
// Compared: the defaulted object, whether the write is refused, and every
// error (type, field, detail, message) in order. On update, kube-apiserver
// checks metadata up to four times (rest's common fields and the RBAC
// validation each run a create and an update check); admitd checks it once
// for every kind, so errors under metadata are compared as sets there.
package rbacvalidation

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

func TestMain(m *testing.M) {
	quietklog.SilenceErrors()
	os.Exit(m.Run())
}

// strategy is upstream's create and update strategy of one kind.
type strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

func upstreamStrategy(obj runtime.Object) (strategy, string) {
	switch obj.(type) {
	case *rbacv1.Role:
		return role.Strategy, "roles"
	case *rbacv1.ClusterRole:
		return clusterrole.Strategy, "clusterroles"
	case *rbacv1.RoleBinding:
		return rolebinding.Strategy, "rolebindings"
	case *rbacv1.ClusterRoleBinding:
		return clusterrolebinding.Strategy, "clusterrolebindings"
	}
	panic(fmt.Sprintf("not an RBAC object: %T", obj))
}

// write is one create (old nil) or update, in v1 objects as a client sends
// them; defaulted says whether decoding defaults apply (upstream's own
// validation tables hand their objects to validation as they are).
type write struct {
	name      string
	obj, old  runtime.Object
	defaulted bool
}

// outcome is what one side made of a write.
type outcome struct {
	defaulted runtime.Object
	errs      field.ErrorList
}

func requestContext(obj runtime.Object, resource string) context.Context {
	ns := accessorNamespace(obj)
	ctx := genericapirequest.WithNamespace(context.Background(), ns)
	return genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{IsResourceRequest: true,
		APIGroup: rbacv1.GroupName, APIVersion: "v1", Resource: resource, Namespace: ns, Verb: "create"})
}

// upstream runs kube-apiserver's steps: v1 defaulting on decode (of the
// sent object only: the stored one was defaulted when written), then the
// strategy on the internal objects.
func upstream(t *testing.T, w write) outcome {
	t.Helper()
	obj := w.obj.DeepCopyObject()
	if w.defaulted {
		legacyscheme.Scheme.Default(obj)
	}
	s, resource := upstreamStrategy(obj)
	ctx := requestContext(obj, resource)
	in := updiff.ToInternal(t, obj)
	var errs field.ErrorList
	if w.old == nil {
		s.PrepareForCreate(ctx, in)
		errs = rest.ValidateCreate(ctx, in, s)
	} else {
		old := updiff.ToInternal(t, w.old)
		s.PrepareForUpdate(ctx, in, old)
		errs = rest.ValidateUpdate(ctx, in, old, s)
	}
	return outcome{defaulted: obj, errs: errs}
}

// ours runs admitd's: the catalogue's defaulting on decode, then
// PrepareCreate or PrepareUpdate, as the server does.
func ours(t *testing.T, cat *registry.Catalogue, w write) outcome {
	t.Helper()
	obj := w.obj.DeepCopyObject()
	res, ok := cat.LookupKind(rbacv1.SchemeGroupVersion.WithKind(kindOf(obj)))
	if !ok {
		t.Fatalf("no resource for %T", obj)
	}
	if w.defaulted {
		res.Default(obj)
	}
	sent := obj.DeepCopyObject()
	var errs field.ErrorList
	if w.old == nil {
		errs = registry.PrepareCreate(res, obj)
	} else {
		errs = registry.PrepareUpdate(res, obj, w.old.DeepCopyObject())
	}
	return outcome{defaulted: sent, errs: errs}
}

// tally counts what the comparisons saw.
type tally struct {
	creates, updates, refused, accepted, mismatches int
	firstErrors                                     map[string]int
}

func (c *tally) String() string {
	var lines []string
	for k, n := range c.firstErrors {
		lines = append(lines, fmt.Sprintf("  %5d refused first with %s", n, k))
	}
	slices.Sort(lines)
	return fmt.Sprintf("%d writes (%d creates, %d updates): %d refused, %d accepted, %d mismatches\n%s",
		c.creates+c.updates, c.creates, c.updates, c.refused, c.accepted, c.mismatches, strings.Join(lines, "\n"))
}

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	up, our := upstream(t, w), ours(t, cat, w)
	if w.old == nil {
		c.creates++
	} else {
		c.updates++
	}
	if len(up.errs) == 0 {
		c.accepted++
	} else {
		c.refused++
		if c.firstErrors == nil {
			c.firstErrors = map[string]int{}
		}
		c.firstErrors[fmt.Sprintf("%s %s", up.errs[0].Type, updiff.Indexless(up.errs[0].Field))]++
	}
	failed := false
	if d := cmp.Diff(up.defaulted, our.defaulted); d != "" {
		t.Errorf("%s: defaulted object differs (-upstream +admitd):\n%s", w.name, d)
		failed = true
	}
	u, o := updiff.Describe(up.errs, w.old != nil), updiff.Describe(our.errs, w.old != nil)
	if d := cmp.Diff(u, o); d != "" {
		t.Errorf("%s: errors differ (-upstream +admitd):\n%s\nsent: %+v\nold: %+v", w.name, d, w.obj, w.old)
		failed = true
	}
	if failed {
		c.mismatches++
	}
}

func kindOf(obj runtime.Object) string {
	switch obj.(type) {
	case *rbacv1.Role:
		return "Role"
	case *rbacv1.ClusterRole:
		return "ClusterRole"
	case *rbacv1.RoleBinding:
		return "RoleBinding"
	case *rbacv1.ClusterRoleBinding:
		return "ClusterRoleBinding"
	}
	panic(fmt.Sprintf("not an RBAC object: %T", obj))
}

func accessorNamespace(obj runtime.Object) string {
	switch o := obj.(type) {
	case *rbacv1.Role:
		return o.Namespace
	case *rbacv1.RoleBinding:
		return o.Namespace
	}
	return ""
}
