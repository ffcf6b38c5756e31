package nodelifecycle

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
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
	first := true
	return retry.RetryOnConflict(updateBackoff, func() error {
		opts := metav1.GetOptions{}
		if first {
			opts.ResourceVersion, first = "0", false
		}
		node, err := c.client.CoreV1().Nodes().Get(ctx, name, opts)
		if err != nil {
			return err
		}
		labels := labelsToReconcile(node)
		if len(labels) == 0 {
			return nil
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
		if err != nil {
			return err
		}
		_, err = c.client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		return err
	})
}
