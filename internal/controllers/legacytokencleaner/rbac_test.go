package legacytokencleaner

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// The bootstrap policy lets User (bound to
// system:controller:legacy-service-account-token-cleaner) make every
// request the controller makes: reading the tracking ConfigMap, and
// patching and deleting Secrets. (Its informers' reads are
// kube-controller-manager's shared ones upstream; here the caches read
// storage.)
func TestBootstrapRBACCoversTheController(t *testing.T) {
	needed := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{trackingConfigMap}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"patch", "delete"}},
	}
	controllertest.RequireBootstrapRBAC(t, User, needed)
}
