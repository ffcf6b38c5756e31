package servicecidrs

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// The bootstrap policy lets User (bound to
// system:controller:service-cidrs-controller) make every request the
// controller makes, and those its informers make upstream: watching
// ServiceCIDRs and IPAddresses, patching a ServiceCIDR (its finalizer)
// and its status (the Ready condition, by apply), and recording events.
func TestBootstrapRBACCoversTheController(t *testing.T) {
	needed := []rbacv1.PolicyRule{
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"servicecidrs"}, Verbs: []string{"list", "watch", "patch"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"servicecidrs/status"}, Verbs: []string{"patch"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ipaddresses"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
	controllertest.RequireBootstrapRBAC(t, User, needed)
}
