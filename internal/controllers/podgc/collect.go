package podgc

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// parallelDeletes bounds the deletes one pass runs at once (upstream
// starts them all at once).
const parallelDeletes = 16

// Collect is one pass over a listing of pods and nodes, as upstream's gc:
// terminated pods beyond the threshold, terminating pods on out-of-service
// nodes, orphans of nodes gone past their quarantine, then terminating
// pods never scheduled. Failures are logged; the next pass tries again.
func (c *Controller) Collect(ctx context.Context, pods []*corev1.Pod, nodes []*corev1.Node) {
	byName := make(map[string]*corev1.Node, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
	}
	if c.threshold > 0 {
		c.deleteInParallel(ctx, TerminatedOverThreshold(pods, c.threshold), "terminated")
	}
	c.deleteInParallel(ctx, TerminatingOnOutOfServiceNodes(pods, byName), "terminating on an out-of-service node")
	c.collectOrphans(ctx, pods, byName)
	for _, p := range UnscheduledTerminating(pods) {
		c.report(c.failAndDelete(ctx, p, nil), p, "terminating and never scheduled")
	}
}

// deleteInParallel fails and deletes pods, a few at a time.
func (c *Controller) deleteInParallel(ctx context.Context, pods []*corev1.Pod, why string) {
	if len(pods) == 0 {
		return
	}
	c.log.Info("garbage collecting pods", "reason", why, "pods", len(pods))
	var wg sync.WaitGroup
	slots := make(chan struct{}, parallelDeletes)
	for _, p := range pods {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			c.report(c.failAndDelete(ctx, p, nil), p, why)
		})
	}
	wg.Wait()
}

// collectOrphans quarantines the nodes pods are bound to that are not
// listed, then deletes the pods of those whose quarantine is over and that
// the server confirms are gone.
func (c *Controller) collectOrphans(ctx context.Context, pods []*corev1.Pod, nodes map[string]*corev1.Node) {
	for _, p := range pods {
		if p.Spec.NodeName != "" && nodes[p.Spec.NodeName] == nil {
			c.missingNodes.AddAfter(p.Spec.NodeName, c.quarantine)
		}
	}
	gone := c.goneNodes(ctx, nodes)
	for _, p := range pods {
		if gone[p.Spec.NodeName] {
			c.report(c.failAndDelete(ctx, p, orphanCondition(p)), p, "bound to a node that no longer exists")
		}
	}
}

// goneNodes takes the nodes out of quarantine and returns those that are
// still not listed and that the server does not have.
func (c *Controller) goneNodes(ctx context.Context, listed map[string]*corev1.Node) map[string]bool {
	gone := map[string]bool{}
	for c.missingNodes.Len() > 0 {
		name, quit := c.missingNodes.Get()
		if quit {
			return gone
		}
		if listed[name] == nil {
			_, err := c.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				gone[name] = true
			case err != nil:
				// quarantined again by the next pass if still needed
				c.log.Warn("reading a missing node", "node", name, "err", err)
			}
		}
		c.missingNodes.Done(name)
	}
	return gone
}

func (c *Controller) report(err error, p *corev1.Pod, why string) {
	switch {
	case err == nil:
		c.log.Info("force deleted pod", "pod", p.Namespace+"/"+p.Name, "reason", why)
	case apierrors.IsNotFound(err):
		c.log.Debug("pod already gone", "pod", p.Namespace+"/"+p.Name)
	default:
		c.log.Warn("deleting pod failed", "pod", p.Namespace+"/"+p.Name, "reason", why, "err", err)
	}
}

// failAndDelete patches the pod's status to phase Failed (with cond, when
// given) unless it has already succeeded or failed, then deletes it with
// a grace period of 0.
func (c *Controller) failAndDelete(ctx context.Context, p *corev1.Pod, cond *corev1.PodCondition) error {
	pods := c.client.CoreV1().Pods(p.Namespace)
	if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		patch, err := StatusPatch(p, FailedStatus(p, cond, metav1.Now()))
		if err != nil {
			return err
		}
		if _, err := pods.Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			return err
		}
	}
	return pods.Delete(ctx, p.Name, *metav1.NewDeleteOptions(0))
}
