package deployment

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers"
)

// sync brings the Deployment at key to its spec: as upstream's
// syncDeployment, a scaling event is handled apart from a rollout, and a
// paused or deleted Deployment only has its status kept.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, _ := cutKey(key)
	cached, ok := c.deployments.Get(ns, name)
	if !ok {
		return nil
	}
	d := cached.DeepCopy()
	if reflect.DeepEqual(d.Spec.Selector, &metav1.LabelSelector{}) {
		c.recorder.Eventf(d, corev1.EventTypeWarning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			_, _ = c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
		}
		return nil
	}
	rss, err := c.claimReplicaSets(ctx, d)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		newRS, oldRSs, err := c.replicaSetsAndRevision(ctx, d, rss, false)
		if err != nil {
			return err
		}
		return c.syncStatus(ctx, append(oldRSs, newRS), newRS, d)
	}
	if err := c.checkPausedConditions(ctx, d); err != nil {
		return err
	}
	if d.Spec.Paused {
		return c.syncScale(ctx, d, rss)
	}
	scaling, err := c.isScalingEvent(ctx, d, rss)
	if err != nil {
		return err
	}
	if scaling {
		return c.syncScale(ctx, d, rss)
	}
	switch d.Spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		return c.rolloutRecreate(ctx, d, rss)
	case appsv1.RollingUpdateDeploymentStrategyType:
		return c.rolloutRolling(ctx, d, rss)
	}
	return fmt.Errorf("unexpected deployment strategy type: %s", d.Spec.Strategy.Type)
}

func cutKey(k string) (string, string, bool) {
	for i := range len(k) {
		if k[i] == '/' {
			return k[:i], k[i+1:], true
		}
	}
	return "", k, false
}

// claimReplicaSets are the ReplicaSets d controls, after adopting the
// orphans its selector matches and releasing those it no longer matches
// (upstream's ReplicaSetControllerRefManager).
func (c *Controller) claimReplicaSets(ctx context.Context, d *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s has invalid label selector: %v", d.Namespace, d.Name, err)
	}
	m := &controllers.ControllerRefManager[*appsv1.ReplicaSet]{Owner: d, OwnerKind: controllerKind, Kind: "ReplicaSet", Selector: selector,
		Get: func(ctx context.Context) (metav1.Object, error) {
			return c.client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
		},
		Patch: controllers.PatchReplicaSets(c.client)}
	return m.Claim(ctx, c.replicaSets.List(d.Namespace, func(*appsv1.ReplicaSet) bool { return true }))
}

// replicaSetsAndRevision finds the new ReplicaSet (created when create
// and missing) and the old ones, and syncs the revision.
func (c *Controller) replicaSetsAndRevision(ctx context.Context, d *appsv1.Deployment, rss []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	old := findOldReplicaSets(d, rss)
	newRS, err := c.newReplicaSet(ctx, d, rss, old, create)
	return newRS, old, err
}

// newReplicaSet is upstream's getNewReplicaSet: the existing new
// ReplicaSet with its annotations brought up to date, or (when create) a
// new one named after the template's hash, a hash collision bumping
// status.collisionCount.
func (c *Controller) newReplicaSet(ctx context.Context, d *appsv1.Deployment, rss, old []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, error) {
	existing := findNewReplicaSet(d, rss)
	newRevision := strconv.FormatInt(maxRevision(old)+1, 10)
	if existing != nil {
		return c.updateNewReplicaSet(ctx, d, existing.DeepCopy(), newRevision)
	}
	if !create {
		return nil, nil
	}
	template := *d.Spec.Template.DeepCopy()
	hash := ComputeHash(&template, d.Status.CollisionCount)
	template.Labels = withLabel(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	selector := d.Spec.Selector.DeepCopy()
	if selector.MatchLabels == nil {
		selector.MatchLabels = map[string]string{}
	}
	selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: replicaSetName(d.Name, hash), Namespace: d.Namespace,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, controllerKind)}, Labels: template.Labels},
		Spec: appsv1.ReplicaSetSpec{Replicas: new(int32), MinReadySeconds: d.Spec.MinReadySeconds, Selector: selector, Template: template}}
	replicas, err := newRSNewReplicas(d, append(append([]*appsv1.ReplicaSet{}, old...), rs), rs)
	if err != nil {
		return nil, err
	}
	*rs.Spec.Replicas = replicas
	setNewReplicaSetAnnotations(d, rs, newRevision, false)
	created, err := c.client.AppsV1().ReplicaSets(d.Namespace).Create(ctx, rs, metav1.CreateOptions{})
	exists := false
	switch {
	case apierrors.IsAlreadyExists(err):
		exists = true
		cur, ok := c.replicaSets.Get(rs.Namespace, rs.Name)
		if !ok {
			return nil, err
		}
		if ref := metav1.GetControllerOfNoCopy(cur); ref != nil && ref.UID == d.UID && equalIgnoreHash(&d.Spec.Template, &cur.Spec.Template) {
			created, err = cur, nil
			break
		}
		if d.Status.CollisionCount == nil {
			d.Status.CollisionCount = new(int32)
		}
		*d.Status.CollisionCount++
		_, _ = c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
		return nil, err
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name, err)
		if hasProgressDeadline(d) {
			setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, reasonFailedRSCreate, msg, c.now()))
			_, _ = c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
		}
		c.recorder.Eventf(d, corev1.EventTypeWarning, reasonFailedRSCreate, "%s", msg)
		return nil, err
	}
	if !exists && replicas > 0 {
		c.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, replicas)
	}
	needsUpdate := setRevision(d, newRevision)
	if !exists && hasProgressDeadline(d) {
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reasonNewReplicaSet,
			fmt.Sprintf("Created new replica set %q", created.Name), c.now()))
		needsUpdate = true
	}
	if needsUpdate {
		_, err = c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	}
	return created, err
}

// updateNewReplicaSet brings the existing new ReplicaSet's annotations
// and minReadySeconds up to date, then the Deployment's revision and its
// Progressing condition.
func (c *Controller) updateNewReplicaSet(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision string) (*appsv1.ReplicaSet, error) {
	annotationsUpdated := setNewReplicaSetAnnotations(d, rs, newRevision, true)
	if annotationsUpdated || rs.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
		rs.Spec.MinReadySeconds = d.Spec.MinReadySeconds
		return c.client.AppsV1().ReplicaSets(rs.Namespace).Update(ctx, rs, metav1.UpdateOptions{})
	}
	needsUpdate := setRevision(d, rs.Annotations[revisionAnnotation])
	if hasProgressDeadline(d) && getCondition(d.Status, appsv1.DeploymentProgressing) == nil {
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reasonFoundNewRS,
			fmt.Sprintf("Found new replica set %q", rs.Name), c.now()))
		needsUpdate = true
	}
	if needsUpdate {
		if _, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

func withLabel(in map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(in)+1)
	for key, val := range in {
		out[key] = val
	}
	out[k] = v
	return out
}

// checkPausedConditions sets the Progressing condition of a Deployment
// paused or resumed.
func (c *Controller) checkPausedConditions(ctx context.Context, d *appsv1.Deployment) error {
	if !hasProgressDeadline(d) {
		return nil
	}
	cond := getCondition(d.Status, appsv1.DeploymentProgressing)
	if cond != nil && cond.Reason == reasonTimedOut {
		return nil
	}
	pausedCond := cond != nil && cond.Reason == reasonPaused
	switch {
	case d.Spec.Paused && !pausedCond:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, reasonPaused, "Deployment is paused", c.now()))
	case !d.Spec.Paused && pausedCond:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, reasonResumed, "Deployment is resumed", c.now()))
	default:
		return nil
	}
	_, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	return err
}

// isScalingEvent: an active ReplicaSet was made for another replica count.
func (c *Controller) isScalingEvent(ctx context.Context, d *appsv1.Deployment, rss []*appsv1.ReplicaSet) (bool, error) {
	newRS, old, err := c.replicaSetsAndRevision(ctx, d, rss, false)
	if err != nil {
		return false, err
	}
	for _, rs := range activeReplicaSets(append(old, newRS)) {
		if desired, ok := annotationInt32(rs, desiredReplicasAnnotation); ok && desired != *d.Spec.Replicas {
			return true, nil
		}
	}
	return false, nil
}

// syncScale handles a scaling (or a paused Deployment): the new
// replicas are spread over the ReplicaSets, and the status written.
func (c *Controller) syncScale(ctx context.Context, d *appsv1.Deployment, rss []*appsv1.ReplicaSet) error {
	newRS, old, err := c.replicaSetsAndRevision(ctx, d, rss, false)
	if err != nil {
		return err
	}
	if err := c.scale(ctx, d, newRS, old); err != nil {
		return err
	}
	if d.Spec.Paused {
		if err := c.cleanup(ctx, old, d); err != nil {
			return err
		}
	}
	return c.syncStatus(ctx, append(old, newRS), newRS, d)
}

// scale is upstream's scale: the one active (or latest) ReplicaSet takes
// the new count; a saturated new one sends the old ones to zero; during a
// rolling update, the replicas added or removed are spread in proportion
// to each ReplicaSet's size (the largest first, the leftover to the
// first).
func (c *Controller) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) error {
	if rs := activeOrLatest(newRS, old); rs != nil {
		if *rs.Spec.Replicas == *d.Spec.Replicas {
			return nil
		}
		_, _, err := c.scaleReplicaSet(ctx, rs, *d.Spec.Replicas, d, false)
		return err
	}
	if saturated(d, newRS) {
		for _, rs := range activeReplicaSets(old) {
			if _, _, err := c.scaleReplicaSet(ctx, rs, 0, d, false); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRollingUpdate(d) {
		return nil
	}
	all := activeReplicaSets(append(old, newRS))
	allowed := int32(0)
	if *d.Spec.Replicas > 0 {
		allowed = *d.Spec.Replicas + maxSurge(d)
	}
	toAdd := allowed - sum(all, specReplicas)
	switch {
	case toAdd > 0:
		sort.SliceStable(all, bySize(all, true))
	case toAdd < 0:
		sort.SliceStable(all, bySize(all, false))
	}
	added := int32(0)
	sizes := map[string]int32{}
	for _, rs := range all {
		sizes[rs.Name] = *rs.Spec.Replicas
		if toAdd != 0 {
			p := proportion(rs, d, toAdd, added)
			sizes[rs.Name] += p
			added += p
		}
	}
	for i, rs := range all {
		if i == 0 && toAdd != 0 {
			sizes[rs.Name] = max(sizes[rs.Name]+toAdd-added, 0)
		}
		if _, _, err := c.scaleReplicaSet(ctx, rs, sizes[rs.Name], d, true); err != nil {
			return err
		}
	}
	return nil
}

// bySize orders ReplicaSets larger first; among equals, newer first
// (newer) or older first.
func bySize(rss []*appsv1.ReplicaSet, newer bool) func(i, j int) bool {
	return func(i, j int) bool {
		a, b := rss[i], rss[j]
		if *a.Spec.Replicas != *b.Spec.Replicas {
			return *a.Spec.Replicas > *b.Spec.Replicas
		}
		if newer {
			a, b = b, a
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
}

// proportion is rs's share of the replicas to add (or remove), bounded by
// what is left to add.
func proportion(rs *appsv1.ReplicaSet, d *appsv1.Deployment, toAdd, added int32) int32 {
	if rs == nil || *rs.Spec.Replicas == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	fraction := replicaSetFraction(rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

func replicaSetFraction(rs *appsv1.ReplicaSet, d *appsv1.Deployment) int32 {
	if *d.Spec.Replicas == 0 {
		return -*rs.Spec.Replicas
	}
	maxReplicas := *d.Spec.Replicas + maxSurge(d)
	before, ok := annotationInt32(rs, maxReplicasAnnotation)
	if !ok || before == 0 {
		if before = d.Status.Replicas; before == 0 {
			return 0
		}
	}
	size := float64(*rs.Spec.Replicas*maxReplicas) / float64(before)
	rounded := int32(size + 0.5)
	if size < 0 {
		rounded = int32(size - 0.5)
	}
	return rounded - *rs.Spec.Replicas
}

// activeOrLatest is the one active ReplicaSet, or the newest when none is
// active; nil when several are.
func activeOrLatest(newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(old) == 0 {
		return nil
	}
	byCreation(old)
	for i, j := 0, len(old)-1; i < j; i, j = i+1, j-1 {
		old[i], old[j] = old[j], old[i]
	}
	active := activeReplicaSets(append(append([]*appsv1.ReplicaSet{}, old...), newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return old[0]
	case 1:
		return active[0]
	}
	return nil
}

// scaleReplicaSet sets rs's replicas (and its replicas annotations) to
// newScale, recording a ScalingReplicaSet event when the size changed.
func (c *Controller) scaleReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, newScale int32, d *appsv1.Deployment, force bool) (bool, *appsv1.ReplicaSet, error) {
	if !force && *rs.Spec.Replicas == newScale {
		return false, rs, nil
	}
	sizeChanged := *rs.Spec.Replicas != newScale
	maxReplicas := *d.Spec.Replicas + maxSurge(d)
	if !sizeChanged && !replicasAnnotationsNeedUpdate(rs, *d.Spec.Replicas, maxReplicas) {
		return false, rs, nil
	}
	oldScale := *rs.Spec.Replicas
	cp := rs.DeepCopy()
	cp.Spec.Replicas = ptr.To(newScale)
	setReplicasAnnotations(cp, *d.Spec.Replicas, maxReplicas)
	updated, err := c.client.AppsV1().ReplicaSets(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
	if err != nil || !sizeChanged {
		return false, updated, err
	}
	direction := "up"
	if oldScale > newScale {
		direction = "down"
	}
	c.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", direction, updated.Name, oldScale, newScale)
	return true, updated, nil
}

// cleanup deletes the oldest old ReplicaSets beyond revisionHistoryLimit
// that are scaled to zero and synced.
func (c *Controller) cleanup(ctx context.Context, old []*appsv1.ReplicaSet, d *appsv1.Deployment) error {
	if !hasRevisionHistoryLimit(d) {
		return nil
	}
	var alive []*appsv1.ReplicaSet
	for _, rs := range old {
		if rs != nil && rs.DeletionTimestamp == nil {
			alive = append(alive, rs)
		}
	}
	diff := int32(len(alive)) - *d.Spec.RevisionHistoryLimit
	if diff <= 0 {
		return nil
	}
	sort.SliceStable(alive, func(i, j int) bool {
		ri, err1 := revision(alive[i])
		rj, err2 := revision(alive[j])
		if err1 != nil || err2 != nil || ri == rj {
			if alive[i].CreationTimestamp.Equal(&alive[j].CreationTimestamp) {
				return alive[i].Name < alive[j].Name
			}
			return alive[i].CreationTimestamp.Before(&alive[j].CreationTimestamp)
		}
		return ri < rj
	})
	for _, rs := range alive[:diff] {
		if rs.Status.Replicas != 0 || *rs.Spec.Replicas != 0 || rs.Generation > rs.Status.ObservedGeneration || rs.DeletionTimestamp != nil {
			continue
		}
		if err := c.client.AppsV1().ReplicaSets(rs.Namespace).Delete(ctx, rs.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// calculateStatus is the Deployment's status from its ReplicaSets, with
// the Available condition.
func (c *Controller) calculateStatus(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) appsv1.DeploymentStatus {
	available := sum(all, availableReplicas)
	status := appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: sum(all, statusReplicas),
		UpdatedReplicas: sum([]*appsv1.ReplicaSet{newRS}, statusReplicas), ReadyReplicas: sum(all, readyReplicas),
		AvailableReplicas: available, UnavailableReplicas: max(sum(all, specReplicas)-available, 0),
		CollisionCount: d.Status.CollisionCount, TerminatingReplicas: terminatingReplicas(all),
	}
	status.Conditions = append(status.Conditions, d.Status.Conditions...)
	if available >= *d.Spec.Replicas-maxUnavailable(d) {
		setCondition(&status, newCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, reasonMinAvailable, "Deployment has minimum availability.", c.now()))
	} else {
		setCondition(&status, newCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, reasonMinUnavailable, "Deployment does not have minimum availability.", c.now()))
	}
	return status
}

// syncStatus writes the calculated status when it changed.
func (c *Controller) syncStatus(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	status := c.calculateStatus(all, newRS, d)
	if reflect.DeepEqual(d.Status, status) {
		return nil
	}
	d.Status = status
	_, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	return err
}
