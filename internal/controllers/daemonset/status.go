package daemonset

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// statusRetries is how often a status write that failed is tried again,
// after a read (upstream's StatusUpdateRetries).
const statusRetries = 1

func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// isPodReady: the pod's Ready condition is True.
func isPodReady(p *corev1.Pod) bool {
	c := readyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// isPodAvailable: ready for more than minReadySeconds at now.
func isPodAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	if !isPodReady(p) {
		return false
	}
	c := readyCondition(p)
	return minReadySeconds == 0 ||
		(!c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(time.Duration(minReadySeconds)*time.Second).Before(now))
}

func isPodTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
}

// Status is ds's status counts for the nodes and its pods by node, hash
// being its current revision's: per node that should run a pod, whether
// one is there, and the oldest one's readiness, availability and
// revision; a pod on a node that should not run one is misscheduled.
func Status(ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, hash string, now time.Time) appsv1.DaemonSetStatus {
	var s appsv1.DaemonSetStatus
	tolerations := podTolerations(ds)
	affinity := nodeaffinity.NewRequiredNodeAffinity(ds.Spec.Template.Spec.NodeSelector, ds.Spec.Template.Spec.Affinity)
	generation := templateGeneration(ds)
	for _, node := range nodes {
		shouldRun, _ := nodeShouldRun(node, ds, tolerations, affinity)
		pods := byNode[node.Name]
		if !shouldRun {
			if len(pods) > 0 {
				s.NumberMisscheduled++
			}
			continue
		}
		s.DesiredNumberScheduled++
		if len(pods) == 0 {
			continue
		}
		s.CurrentNumberScheduled++
		sortPods(pods)
		pod := pods[0]
		if isPodReady(pod) {
			s.NumberReady++
			if isPodAvailable(pod, ds.Spec.MinReadySeconds, now) {
				s.NumberAvailable++
			}
		}
		if isPodUpdated(pod, hash, generation) {
			s.UpdatedNumberScheduled++
		}
	}
	s.NumberUnavailable = s.DesiredNumberScheduled - s.NumberAvailable
	return s
}

// updateStatus writes ds's status counts (and, when observed, its
// generation as observed) if they changed; with minReadySeconds and pods
// ready but not yet available, ds is synced again after them.
func (c *Controller) updateStatus(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string, observed bool) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for daemon set %q: %v", ds.Name, err)
	}
	s := Status(ds, nodes, byNode, hash, c.failedPodsBackoff.Clock.Now())
	if err := c.storeStatus(ctx, ds, s, observed); err != nil {
		return fmt.Errorf("error storing status for daemon set %#v: %w", ds, err)
	}
	if ds.Spec.MinReadySeconds > 0 && s.NumberReady != s.NumberAvailable {
		c.enqueueAfter(ds, time.Duration(ds.Spec.MinReadySeconds)*time.Second)
	}
	return nil
}

func sameCounts(a, b *appsv1.DaemonSetStatus) bool {
	return a.DesiredNumberScheduled == b.DesiredNumberScheduled && a.CurrentNumberScheduled == b.CurrentNumberScheduled &&
		a.NumberMisscheduled == b.NumberMisscheduled && a.NumberReady == b.NumberReady &&
		a.UpdatedNumberScheduled == b.UpdatedNumberScheduled && a.NumberAvailable == b.NumberAvailable &&
		a.NumberUnavailable == b.NumberUnavailable
}

// storeStatus writes the counts of s into ds's status, once more after a
// read if the write fails.
func (c *Controller) storeStatus(ctx context.Context, ds *appsv1.DaemonSet, s appsv1.DaemonSetStatus, observed bool) error {
	if sameCounts(&ds.Status, &s) && ds.Status.ObservedGeneration >= ds.Generation {
		return nil
	}
	u := ds.DeepCopy()
	for i := 0; ; i++ {
		if observed {
			u.Status.ObservedGeneration = ds.Generation
		}
		u.Status.DesiredNumberScheduled, u.Status.CurrentNumberScheduled = s.DesiredNumberScheduled, s.CurrentNumberScheduled
		u.Status.NumberMisscheduled, u.Status.NumberReady = s.NumberMisscheduled, s.NumberReady
		u.Status.UpdatedNumberScheduled, u.Status.NumberAvailable = s.UpdatedNumberScheduled, s.NumberAvailable
		u.Status.NumberUnavailable = s.NumberUnavailable
		_, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{})
		if err == nil || i >= statusRetries {
			return err
		}
		if u, err = c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{}); err != nil {
			return err
		}
	}
}
