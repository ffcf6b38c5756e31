package rbac

import (
	"reflect"
	"testing"

	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"

	"github.com/admitd/admitd/internal/auth"
)

// TestForbidden: the 403 users see for a request no authorizer allowed is
// the one kube-apiserver writes, message, reason and details alike.
func TestForbidden(t *testing.T) {
	g := newGen(13)
	for range 2000 {
		a := g.attributes()
		a.Name = g.pick([]string{"", "p", "<b>&"})
		a.User.Username = g.pick([]string{"alice", "<script>", `a"b`})
		reason := g.pick([]string{"", `RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`, "<why>"})
		got := auth.Forbidden(a, reason).ErrStatus
		want := responsewriters.ForbiddenStatusError(upstreamAttributes(a), reason).ErrStatus
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Forbidden(%+v, %q) = %+v\nupstream: %+v", a, reason, got, want)
		}
	}
}
