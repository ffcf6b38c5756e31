package daemonset

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/admitd/admitd/internal/controllers/replicaset"
)

// Event reasons, as upstream's.
const (
	reasonSelectingAll       = "SelectingAll"
	reasonFailedDaemonPod    = "FailedDaemonPod"
	reasonSucceededDaemonPod = "SucceededDaemonPod"
	reasonFailedCreate       = "FailedCreate"
	reasonSuccessfulCreate   = "SuccessfulCreate"
	reasonFailedDelete       = "FailedDelete"
	reasonSuccessfulDelete   = "SuccessfulDelete"
)

// sync brings the DaemonSet key's revisions, pods and status up to date.
func (c *Controller) sync(ctx context.Context, k string) error {
	namespace, name, _ := cutKey(k)
	ds, ok := c.daemonSets.Get(namespace, name)
	if !ok {
		c.expectations.Forget(k)
		return nil
	}
	nodes := c.nodes.List("", func(*corev1.Node) bool { return true })
	if reflect.DeepEqual(ds.Spec.Selector, &metav1.LabelSelector{}) {
		c.recorder.Eventf(ds, corev1.EventTypeWarning, reasonSelectingAll, "This daemon set is selecting all pods. A non-empty selector is required.")
		return nil
	}
	if ds.DeletionTimestamp != nil {
		// its revisions may be gone or orphaned already: its status cannot
		// be told
		return nil
	}
	cur, old, err := c.constructHistory(ctx, ds)
	if err != nil {
		return fmt.Errorf("failed to construct revisions of DaemonSet: %v", err)
	}
	hash := cur.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	if !c.expectations.Satisfied(k) {
		return c.updateStatus(ctx, ds, nodes, hash, false)
	}
	err = c.update(ctx, ds, nodes, hash, k, old)
	statusErr := c.updateStatus(ctx, ds, nodes, hash, true)
	switch {
	case err != nil && statusErr != nil:
		c.log.Warn("writing a daemon set's status", "daemonset", k, "err", statusErr)
		return err
	case err != nil:
		return err
	}
	return statusErr
}

// update creates and deletes pods (manage), rolls out a RollingUpdate
// DaemonSet's template, and deletes revisions beyond the history limit.
func (c *Controller) update(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash, k string, old []*appsv1.ControllerRevision) error {
	if err := c.manage(ctx, ds, nodes, hash); err != nil {
		return err
	}
	if c.expectations.Satisfied(k) && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if err := c.rollingUpdate(ctx, ds, nodes, hash); err != nil {
			return err
		}
	}
	if err := c.cleanupHistory(ctx, ds, old); err != nil {
		return fmt.Errorf("failed to clean up revisions of DaemonSet: %w", err)
	}
	return nil
}

// manage creates a pod on each node that should run one and has none, and
// deletes the pods of nodes that should not run one (and the extra,
// failed and succeeded ones).
func (c *Controller) manage(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for daemon set %q: %v", ds.Name, err)
	}
	tolerations := podTolerations(ds)
	affinity := nodeaffinity.NewRequiredNodeAffinity(ds.Spec.Template.Spec.NodeSelector, ds.Spec.Template.Spec.Affinity)
	var create, remove []string
	for _, node := range nodes {
		add, del := c.podsShouldBeOnNode(node, byNode, ds, hash, tolerations, affinity)
		create = append(create, add...)
		remove = append(remove, del...)
	}
	remove = append(remove, unscheduledPodsWithoutNode(nodes, byNode)...)
	return c.syncNodes(ctx, ds, remove, create, hash)
}

// podsShouldBeOnNode are the node's name when it needs a daemon pod, and
// the daemon pods to delete from it.
func (c *Controller) podsShouldBeOnNode(node *corev1.Node, byNode map[string][]*corev1.Pod, ds *appsv1.DaemonSet, hash string,
	tolerations []corev1.Toleration, affinity nodeaffinity.RequiredNodeAffinity) (create, remove []string) {
	shouldRun, shouldContinueRunning := nodeShouldRun(node, ds, tolerations, affinity)
	pods, exists := byNode[node.Name]
	switch {
	case shouldRun && !exists:
		return []string{node.Name}, nil
	case shouldContinueRunning:
		running, finished := c.runningPods(node, ds, pods)
		remove = finished
		if !allowsSurge(ds) {
			if len(running) > 1 {
				sortPods(running)
				for _, p := range running[1:] {
					remove = append(remove, p.Name)
				}
			}
			return nil, remove
		}
		if len(running) <= 1 {
			if len(running) == 0 && shouldRun {
				create = []string{node.Name}
			}
			return create, remove
		}
		return nil, append(remove, c.surplusSurgePods(ds, running, hash)...)
	case exists:
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				remove = append(remove, p.Name)
			}
		}
	}
	return nil, remove
}

// runningPods splits the node's daemon pods not being deleted into the
// running ones and the finished ones to delete: a failed pod (at most once
// per backoff, with a FailedDaemonPod event) or a succeeded one (with a
// SucceededDaemonPod event).
func (c *Controller) runningPods(node *corev1.Node, ds *appsv1.DaemonSet, pods []*corev1.Pod) (running []*corev1.Pod, remove []string) {
	for _, p := range pods {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodFailed:
			backoffKey := fmt.Sprintf("%s/%d/%s", ds.UID, ds.Status.ObservedGeneration, node.Name)
			now := c.failedPodsBackoff.Clock.Now()
			if c.failedPodsBackoff.IsInBackOffSinceUpdate(backoffKey, now) {
				c.enqueueAfter(ds, c.failedPodsBackoff.Get(backoffKey))
				continue
			}
			c.failedPodsBackoff.Next(backoffKey, now)
			c.recorder.Eventf(ds, corev1.EventTypeWarning, reasonFailedDaemonPod, "%s",
				fmt.Sprintf("Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, node.Name))
			remove = append(remove, p.Name)
		case p.Status.Phase == corev1.PodSucceeded:
			c.recorder.Eventf(ds, corev1.EventTypeNormal, reasonSucceededDaemonPod, "%s",
				fmt.Sprintf("Found succeeded daemon pod %s/%s on node %s, will try to delete it", p.Namespace, p.Name, node.Name))
			remove = append(remove, p.Name)
		default:
			running = append(running, p)
		}
	}
	return running, remove
}

// surplusSurgePods are the pods to delete from a node with several running
// while surging: all but the oldest of the current revision and the oldest
// of another, and that old one too once it is not ready or the new one is
// available.
func (c *Controller) surplusSurgePods(ds *appsv1.DaemonSet, running []*corev1.Pod, hash string) []string {
	var remove []string
	var oldestNew, oldestOld *corev1.Pod
	sortPods(running)
	for _, p := range running {
		switch {
		case p.Labels[appsv1.ControllerRevisionHashLabelKey] == hash && oldestNew == nil:
			oldestNew = p
		case p.Labels[appsv1.ControllerRevisionHashLabelKey] != hash && oldestOld == nil:
			oldestOld = p
		default:
			remove = append(remove, p.Name)
		}
	}
	if oldestNew != nil && oldestOld != nil &&
		(!isPodReady(oldestOld) || isPodAvailable(oldestNew, ds.Spec.MinReadySeconds, c.failedPodsBackoff.Clock.Now())) {
		remove = append(remove, oldestOld.Name)
	}
	return remove
}

// unscheduledPodsWithoutNode are the unbound pods meant for nodes that do
// not exist: no scheduler will bind them and no pod GC delete them.
func unscheduledPodsWithoutNode(nodes []*corev1.Node, byNode map[string][]*corev1.Pod) []string {
	exists := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		exists[n.Name] = true
	}
	var out []string
	for node, pods := range byNode {
		if exists[node] {
			continue
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				out = append(out, p.Name)
			}
		}
	}
	return out
}

// syncNodes deletes the pods named and creates a pod for each node named,
// at most burstReplicas of each, the creates in slow-start batches (1, 2,
// 4, ...; a batch with a failure ends them), expecting each to be seen.
func (c *Controller) syncNodes(ctx context.Context, ds *appsv1.DaemonSet, remove, create []string, hash string) error {
	k := key(ds.Namespace, ds.Name)
	create, remove = create[:min(len(create), burstReplicas)], remove[:min(len(remove), burstReplicas)]
	c.expectations.Expect(k, len(create), len(remove))
	errCh := make(chan error, len(create)+len(remove))
	template := PodTemplate(ds, hash)
	batch := min(len(create), slowStartInitialBatch)
	for pos := 0; pos < len(create); batch, pos = min(2*batch, len(create)-(pos+batch)), pos+batch {
		failedBefore := len(errCh)
		var wg sync.WaitGroup
		for _, node := range create[pos : pos+batch] {
			wg.Go(func() {
				if err := c.createPod(ctx, ds, &template, node); err != nil {
					if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
						return
					}
					c.expectations.CreationObserved(k)
					errCh <- err
				}
			})
		}
		wg.Wait()
		if skipped := len(create) - (pos + batch); len(errCh) > failedBefore && skipped > 0 {
			c.expectations.Lower(k, skipped, 0)
			break
		}
	}
	var wg sync.WaitGroup
	for _, name := range remove {
		wg.Go(func() {
			if err := c.deletePodOf(ctx, ds, name); err != nil {
				c.expectations.DeletionObserved(k)
				if !apierrors.IsNotFound(err) {
					errCh <- err
				}
			}
		})
	}
	wg.Wait()
	close(errCh)
	var errs []error
	for err := range errCh {
		errs = append(errs, err)
	}
	return utilerrors.NewAggregate(errs)
}

// createPod creates ds's pod for the node, recording an event either way
// (none when the namespace is terminating).
func (c *Controller) createPod(ctx context.Context, ds *appsv1.DaemonSet, template *corev1.PodTemplateSpec, node string) error {
	t := template.DeepCopy()
	t.Spec.Affinity = WithNodeAffinity(t.Spec.Affinity, node)
	pod := replicaset.PodFromTemplate(t, ds.Name, *metav1.NewControllerRef(ds, controllerKind))
	if len(pod.Labels) == 0 {
		return fmt.Errorf("unable to create pods, no labels")
	}
	created, err := c.client.CoreV1().Pods(ds.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.recorder.Eventf(ds, corev1.EventTypeWarning, reasonFailedCreate, "Error creating: %v", err)
		}
		return err
	}
	c.recorder.Eventf(ds, corev1.EventTypeNormal, reasonSuccessfulCreate, "Created pod: %v", created.Name)
	return nil
}

// deletePodOf deletes a pod of ds, recording an event unless it was gone
// already.
func (c *Controller) deletePodOf(ctx context.Context, ds *appsv1.DaemonSet, name string) error {
	if err := c.client.CoreV1().Pods(ds.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return err
		}
		c.recorder.Eventf(ds, corev1.EventTypeWarning, reasonFailedDelete, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete pods: %v", err)
	}
	c.recorder.Eventf(ds, corev1.EventTypeNormal, reasonSuccessfulDelete, "Deleted pod: %v", name)
	return nil
}

// sortPods orders pods bound first, then oldest first, then by name.
func sortPods(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if (a.Spec.NodeName != "") != (b.Spec.NodeName != "") {
			return a.Spec.NodeName != ""
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
}
