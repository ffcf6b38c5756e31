package vacprotection

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// The bootstrap policy lets User (bound to
// system:controller:volumeattributesclass-protection-controller) make
// every request the controller makes, and those its informers make
// upstream: watching claims, volumes and classes, and updating a class.
func TestBootstrapRBACCoversTheController(t *testing.T) {
	needed := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims", "persistentvolumes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"volumeattributesclasses"}, Verbs: []string{"get", "list", "watch", "update"}},
	}
	controllertest.RequireBootstrapRBAC(t, User, needed)
}
