package hpa

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// The bootstrap policy lets User (system:controller:horizontal-pod-autoscaler,
// bound to the horizontal-pod-autoscaler service account) make every
// request the controller makes: watching autoscalers and pods, writing
// autoscalers' status, reading and writing any scale subresource, asking
// the three metrics APIs, discovery, and recording events.
func TestBootstrapRBACCoversTheController(t *testing.T) {
	needed := []rbacv1.PolicyRule{
		{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments/scale", "replicasets/scale", "statefulsets/scale"}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{""}, Resources: []string{"replicationcontrollers/scale"}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{"example.com"}, Resources: []string{"widgets/scale"}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{"custom.metrics.k8s.io"}, Resources: []string{"pods/requests", "deployments.apps/hits", "metrics"}, Verbs: []string{"get"}},
		{APIGroups: []string{"external.metrics.k8s.io"}, Resources: []string{"queue_length"}, Verbs: []string{"list"}},
		{NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
	controllertest.RequireBootstrapRBAC(t, User, needed)
}
