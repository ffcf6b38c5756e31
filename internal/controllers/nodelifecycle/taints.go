package nodelifecycle

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// The NoExecute taints of a node that is not Ready: not-ready while its
// Ready condition is False, unreachable while it is Unknown; a node has
// one or the other.
var (
	notReadyNoExecute    = corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}
	unreachableNoExecute = corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
)

// conditionTaints are the NoSchedule taint keys of the node conditions,
// by condition type and status.
var conditionTaints = map[corev1.NodeConditionType]map[corev1.ConditionStatus]string{
	corev1.NodeReady:              {corev1.ConditionFalse: corev1.TaintNodeNotReady, corev1.ConditionUnknown: corev1.TaintNodeUnreachable},
	corev1.NodeMemoryPressure:     {corev1.ConditionTrue: corev1.TaintNodeMemoryPressure},
	corev1.NodeDiskPressure:       {corev1.ConditionTrue: corev1.TaintNodeDiskPressure},
	corev1.NodeNetworkUnavailable: {corev1.ConditionTrue: corev1.TaintNodeNetworkUnavailable},
	corev1.NodePIDPressure:        {corev1.ConditionTrue: corev1.TaintNodePIDPressure},
}

// managedNoScheduleKeys are the NoSchedule taint keys the controller owns:
// those of the conditions, and unschedulable.
var managedNoScheduleKeys = map[string]bool{
	corev1.TaintNodeNotReady: true, corev1.TaintNodeUnreachable: true, corev1.TaintNodeMemoryPressure: true,
	corev1.TaintNodeDiskPressure: true, corev1.TaintNodeNetworkUnavailable: true, corev1.TaintNodePIDPressure: true,
	corev1.TaintNodeUnschedulable: true,
}

// noScheduleTaints are the NoSchedule taints node's conditions and
// spec.unschedulable call for, in the order of its conditions.
func noScheduleTaints(node *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, cond := range node.Status.Conditions {
		if key, ok := conditionTaints[cond.Type][cond.Status]; ok {
			out = append(out, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	if node.Spec.Unschedulable {
		out = append(out, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	}
	return out
}

// taintDiff returns the taints of want that have has lacks and those of
// has that want lacks, matching on key and effect.
func taintDiff(want, has []corev1.Taint) (add, remove []corev1.Taint) {
	for _, w := range want {
		if !hasTaint(has, w) {
			add = append(add, w)
		}
	}
	for _, h := range has {
		if !hasTaint(want, h) {
			remove = append(remove, h)
		}
	}
	return add, remove
}

func hasTaint(taints []corev1.Taint, t corev1.Taint) bool {
	for i := range taints {
		if taints[i].MatchTaint(&t) {
			return true
		}
	}
	return false
}

// syncNoScheduleTaints brings the condition and unschedulable NoSchedule
// taints of the cached node name in line with its status and spec.
func (c *Controller) syncNoScheduleTaints(ctx context.Context, name string) error {
	node, ok := c.nodes.Get("", name)
	if !ok {
		return nil
	}
	var has []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule && managedNoScheduleKeys[t.Key] {
			has = append(has, t)
		}
	}
	add, remove := taintDiff(noScheduleTaints(node), has)
	if len(add) == 0 && len(remove) == 0 {
		return nil
	}
	return c.swapTaints(ctx, node, add, remove)
}

// swapTaints adds (or updates) the taints add, stamped with the time,
// then removes the taints remove, in two writes as upstream.
func (c *Controller) swapTaints(ctx context.Context, node *corev1.Node, add, remove []corev1.Taint) error {
	now := metav1.NewTime(c.clock.Now())
	stamped := make([]corev1.Taint, len(add))
	for i, t := range add {
		t.TimeAdded = &now
		stamped[i] = t
	}
	if len(stamped) > 0 {
		if err := c.editTaints(ctx, node.Name, func(taints []corev1.Taint) ([]corev1.Taint, bool) { return withTaints(taints, stamped) }); err != nil {
			return err
		}
	}
	return c.removeTaints(ctx, node, remove...)
}

// removeTaints removes the taints from the node, unless the node as given
// has none of them.
func (c *Controller) removeTaints(ctx context.Context, node *corev1.Node, remove ...corev1.Taint) error {
	found := false
	for _, t := range remove {
		found = found || hasTaint(node.Spec.Taints, t)
	}
	if !found {
		return nil
	}
	return c.editTaints(ctx, node.Name, func(taints []corev1.Taint) ([]corev1.Taint, bool) { return withoutTaints(taints, remove) })
}

// withTaints returns taints with each of add in place of the one of the
// same key and effect, or appended; false when nothing changes.
func withTaints(taints, add []corev1.Taint) ([]corev1.Taint, bool) {
	out := append([]corev1.Taint(nil), taints...)
	changed := false
	for _, t := range add {
		replaced := false
		for i := range out {
			if out[i].MatchTaint(&t) {
				replaced = true
				if !equality.Semantic.DeepEqual(out[i], t) {
					out[i], changed = t, true
				}
				break
			}
		}
		if !replaced {
			out, changed = append(out, t), true
		}
	}
	return out, changed
}

// withoutTaints returns taints without those matching remove (key and
// effect); false when nothing changes.
func withoutTaints(taints, remove []corev1.Taint) ([]corev1.Taint, bool) {
	var out []corev1.Taint
	for _, t := range taints {
		if !hasTaint(remove, t) {
			out = append(out, t)
		}
	}
	return out, len(out) != len(taints)
}

// editTaints patches the node's taints to edit's result, conditional on
// the version read (the list has no merge key, so a concurrent change
// must not be overwritten).
func (c *Controller) editTaints(ctx context.Context, name string, edit func([]corev1.Taint) ([]corev1.Taint, bool)) error {
	return c.patchNode(ctx, name, func(node *corev1.Node) (map[string]any, bool) {
		taints, changed := edit(node.Spec.Taints)
		return map[string]any{
			"metadata": map[string]any{"resourceVersion": node.ResourceVersion},
			"spec":     map[string]any{"taints": taints},
		}, changed
	})
}

// updateBackoff is upstream's UpdateTaintBackoff (and UpdateLabelBackoff).
var updateBackoff = wait.Backoff{Steps: 5, Duration: 100 * time.Millisecond, Jitter: 1.0}

// patchNode reads the node and sends the strategic merge patch build
// makes of it, unless build says there is nothing to change; it retries
// on conflict. The first read may come from the server's cache
// (resourceVersion "0"), the retries not.
func (c *Controller) patchNode(ctx context.Context, name string, build func(*corev1.Node) (map[string]any, bool)) error {
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
		patch, needed := build(node)
		if !needed {
			return nil
		}
		data, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		_, err = c.client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
		return err
	})
}
