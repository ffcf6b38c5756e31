package daemonset

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// rollingUpdate replaces ds's old pods: without surge, it deletes old pods
// while no more than maxUnavailable are unavailable (manage creates their
// replacements); with surge, it creates new pods beside old ones, at most
// maxSurge at a time, and deletes an old pod once its new one is
// available.
func (c *Controller) rollingUpdate(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for daemon set %q: %v", ds.Name, err)
	}
	maxSurge, maxUnavailable, desired, err := updatedDesiredNodeCounts(ds, nodes, byNode)
	if err != nil {
		return fmt.Errorf("couldn't get unavailable numbers: %v", err)
	}
	now := c.failedPodsBackoff.Clock.Now()
	if maxSurge == 0 {
		return c.syncNodes(ctx, ds, oldPodsToReplace(ds, byNode, hash, maxUnavailable, now), nil, hash)
	}
	remove, create, err := c.surge(ds, byNode, hash, maxSurge, desired, now)
	if err != nil {
		return err
	}
	return c.syncNodes(ctx, ds, remove, create, hash)
}

// oldPodsToReplace are the old pods to delete without surge: every
// unavailable one, and available ones while fewer than maxUnavailable
// pods are unavailable.
func oldPodsToReplace(ds *appsv1.DaemonSet, byNode map[string][]*corev1.Pod, hash string, maxUnavailable int, now time.Time) []string {
	var unavailable int
	var replacements, candidates []string
	for _, pods := range byNode {
		newPod, oldPod, ok := updatedPodsOnNode(ds, pods, hash)
		switch {
		case !ok, oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
			unavailable++
		case newPod != nil:
			if !isPodAvailable(newPod, ds.Spec.MinReadySeconds, now) {
				unavailable++
			}
		case !isPodAvailable(oldPod, ds.Spec.MinReadySeconds, now):
			replacements = append(replacements, oldPod.Name)
			unavailable++
		case unavailable >= maxUnavailable:
		default:
			candidates = append(candidates, oldPod.Name)
		}
	}
	n := min(max(maxUnavailable-unavailable, 0), len(candidates))
	return append(replacements, candidates[:n]...)
}

// surge is what a surging rollout deletes and creates: an old pod whose
// node's new pod is available, or that is unavailable on a node that no
// longer wants it; a new pod beside each unavailable old one, and beside
// available ones up to maxSurge new pods not yet available; old pods on
// nodes that no longer want them while more are available than desired.
func (c *Controller) surge(ds *appsv1.DaemonSet, byNode map[string][]*corev1.Pod, hash string, maxSurge, desired int, now time.Time) (remove, create []string, err error) {
	var shouldNotRun, candidates []string
	var surging, available int
	tolerations := podTolerations(ds)
	affinity := nodeaffinity.NewRequiredNodeAffinity(ds.Spec.Template.Spec.NodeSelector, ds.Spec.Template.Spec.Affinity)
	minReady := ds.Spec.MinReadySeconds
	for nodeName, pods := range byNode {
		newPod, oldPod, ok := updatedPodsOnNode(ds, pods, hash)
		if !ok {
			surging++
			continue
		}
		if (oldPod != nil && isPodAvailable(oldPod, minReady, now)) || (oldPod == nil && newPod != nil && isPodAvailable(newPod, minReady, now)) {
			available++
		}
		switch {
		case oldPod == nil:
		case newPod == nil:
			node, ok := c.nodes.Get("", nodeName)
			if !ok {
				return nil, nil, fmt.Errorf("couldn't get node for nodeName %q: node %q not found", nodeName, nodeName)
			}
			shouldRun, _ := nodeShouldRun(node, ds, tolerations, affinity)
			switch {
			case !isPodAvailable(oldPod, minReady, now) && !shouldRun:
				remove = append(remove, oldPod.Name)
			case !isPodAvailable(oldPod, minReady, now):
				create = append(create, nodeName)
			case !shouldRun:
				shouldNotRun = append(shouldNotRun, oldPod.Name)
			case surging < maxSurge:
				candidates = append(candidates, nodeName)
			}
		case !isPodAvailable(newPod, minReady, now):
			surging++
		default:
			remove = append(remove, oldPod.Name)
		}
	}
	if deletable := min(available-desired, len(shouldNotRun)); deletable > 0 {
		for _, name := range shouldNotRun[:deletable] {
			if _, ok := c.pods.Get(ds.Namespace, name); ok {
				remove = append(remove, name)
			}
		}
	}
	n := min(max(maxSurge-surging, 0), len(candidates))
	return remove, append(create, candidates[:n]...), nil
}

// updatedPodsOnNode are the node's one pod of the current revision and
// one of an older one, among those not being deleted; not ok when there
// are more (manage prunes them first).
func updatedPodsOnNode(ds *appsv1.DaemonSet, pods []*corev1.Pod, hash string) (newPod, oldPod *corev1.Pod, ok bool) {
	generation := templateGeneration(ds)
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if isPodUpdated(p, hash, generation) {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = p
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = p
		}
	}
	return newPod, oldPod, true
}

// updatedDesiredNodeCounts are the rollout's maxSurge and maxUnavailable
// for the nodes that should run a pod (desired), each such node without
// pods added to byNode; neither set means maxUnavailable 1.
func updatedDesiredNodeCounts(ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod) (maxSurge, maxUnavailable, desired int, err error) {
	tolerations := podTolerations(ds)
	affinity := nodeaffinity.NewRequiredNodeAffinity(ds.Spec.Template.Spec.NodeSelector, ds.Spec.Template.Spec.Affinity)
	for _, node := range nodes {
		if shouldRun, _ := nodeShouldRun(node, ds, tolerations, affinity); !shouldRun {
			continue
		}
		desired++
		if _, ok := byNode[node.Name]; !ok {
			byNode[node.Name] = nil
		}
	}
	if maxUnavailable, err = unavailableCount(ds, desired); err != nil {
		return -1, -1, -1, fmt.Errorf("invalid value for MaxUnavailable: %v", err)
	}
	if maxSurge, err = surgeCount(ds, desired); err != nil {
		return -1, -1, -1, fmt.Errorf("invalid value for MaxSurge: %v", err)
	}
	if desired > 0 && maxUnavailable == 0 && maxSurge == 0 {
		maxUnavailable = 1
	}
	return maxSurge, maxUnavailable, desired, nil
}
