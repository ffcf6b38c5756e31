package nodelifecycle

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// betaLabels are the deprecated beta labels kept equal to the stable
// ones, and added where missing.
var betaLabels = []struct{ stable, beta string }{
	{corev1.LabelOSStable, "beta.kubernetes.io/os"},
	{corev1.LabelArchStable, "beta.kubernetes.io/arch"},
}

// labelsToReconcile are the beta labels node lacks or has with a value
// other than the stable label's.
func labelsToReconcile(node *corev1.Node) map[string]string {
	out := map[string]string{}
	for _, l := range betaLabels {
		stable, ok := node.Labels[l.stable]
		if !ok {
			continue
		}
		if beta, ok := node.Labels[l.beta]; !ok || beta != stable {
			out[l.beta] = stable
		}
	}
	return out
}

// reconcileLabels patches the beta labels of the cached node name.
func (c *Controller) reconcileLabels(ctx context.Context, name string) error {
	node, ok := c.nodes.Get("", name)
	if !ok || len(labelsToReconcile(node)) == 0 {
		return nil
	}
	return c.patchNode(ctx, name, func(node *corev1.Node) (map[string]any, bool) {
		labels := labelsToReconcile(node)
		return map[string]any{"metadata": map[string]any{"labels": labels}}, len(labels) > 0
	})
}
