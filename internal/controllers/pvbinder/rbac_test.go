package pvbinder

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// The bootstrap policy lets User (system:controller:persistent-volume-binder,
// bound to the persistent-volume-binder service account) make every
// request the controller makes.
func TestBootstrapRBACCoversTheController(t *testing.T) {
	needed := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get", "list", "watch", "update", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumes/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch", "update"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
	controllertest.RequireBootstrapRBAC(t, User, needed)
}
