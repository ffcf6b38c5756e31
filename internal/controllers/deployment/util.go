package deployment

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/dump"
)

// Annotations and condition reasons, as upstream's deployment util.
const (
	revisionAnnotation        = "deployment.kubernetes.io/revision"
	revisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	maxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
	rollbackToAnnotation      = "deprecated.deployment.rollback.to"

	reasonReplicaSetUpdated = "ReplicaSetUpdated"
	reasonFailedRSCreate    = "ReplicaSetCreateError"
	reasonNewReplicaSet     = "NewReplicaSetCreated"
	reasonFoundNewRS        = "FoundNewReplicaSet"
	reasonNewRSAvailable    = "NewReplicaSetAvailable"
	reasonTimedOut          = "ProgressDeadlineExceeded"
	reasonPaused            = "DeploymentPaused"
	reasonResumed           = "DeploymentResumed"
	reasonMinAvailable      = "MinimumReplicasAvailable"
	reasonMinUnavailable    = "MinimumReplicasUnavailable"

	// maxRevisionHistoryChars bounds the revision-history annotation.
	maxRevisionHistoryChars = 2000
)

// ComputeHash is the pod-template-hash of a template (and collision
// count): upstream's controller.ComputeHash, the FNV-32a of the template
// printed by k8s.io/utils/dump, encoded as rand.SafeEncodeString.
func ComputeHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(*template))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// replicaSetName is "<deployment>-<hash>", the deployment's name cut so
// that it is a valid name.
func replicaSetName(deployment, hash string) string {
	if maxLen := validation.DNS1123SubdomainMaxLength - 1 - len(hash); len(deployment) > maxLen && maxLen > 0 {
		deployment = deployment[:maxLen]
	}
	return deployment + "-" + hash
}

func newCondition(t appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, msg string, now time.Time) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: t, Status: status, LastUpdateTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now),
		Reason: reason, Message: msg}
}

func getCondition(status appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			c := status.Conditions[i]
			return &c
		}
	}
	return nil
}

// setCondition puts c in status unless one of its type has the same
// status and reason; a condition of the same status keeps its transition
// time.
func setCondition(status *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := getCondition(*status, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeCondition(status, c.Type)
	status.Conditions = append(status.Conditions, c)
}

func removeCondition(status *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	var out []appsv1.DeploymentCondition
	for _, c := range status.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	status.Conditions = out
}

// setRevision sets the deployment's revision annotation, reporting a
// change.
func setRevision(d *appsv1.Deployment, revision string) bool {
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	if d.Annotations[revisionAnnotation] == revision {
		return false
	}
	d.Annotations[revisionAnnotation] = revision
	return true
}

// revision is a ReplicaSet's revision annotation (0 when unset).
func revision(rs *appsv1.ReplicaSet) (int64, error) {
	v, ok := rs.Annotations[revisionAnnotation]
	if !ok {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}

func maxRevision(rss []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		if v, err := revision(rs); err == nil && v > m {
			m = v
		}
	}
	return m
}

// skipCopyAnnotation: annotations of a Deployment not copied to its
// ReplicaSets.
var skipCopyAnnotation = map[string]bool{
	corev1.LastAppliedConfigAnnotation: true, revisionAnnotation: true, revisionHistoryAnnotation: true,
	desiredReplicasAnnotation: true, maxReplicasAnnotation: true, rollbackToAnnotation: true,
}

// setNewReplicaSetAnnotations copies the deployment's annotations to rs,
// raises its revision (keeping the old one in the revision history) and,
// for a ReplicaSet being created, sets its replicas annotations; it
// reports a change.
func setNewReplicaSetAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision string, exists bool) bool {
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	for k, v := range d.Annotations {
		if cur, ok := rs.Annotations[k]; skipCopyAnnotation[k] || (ok && cur == v) {
			continue
		}
		rs.Annotations[k] = v
		changed = true
	}
	oldRevision, had := rs.Annotations[revisionAnnotation]
	oldInt, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil {
		if oldRevision != "" {
			return false
		}
		oldInt = 0
	}
	newInt, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		return false
	}
	if oldInt < newInt {
		rs.Annotations[revisionAnnotation] = newRevision
		changed = true
	}
	if had && oldInt < newInt {
		appendRevisionHistory(rs, oldRevision)
	}
	if !exists && setReplicasAnnotations(rs, *d.Spec.Replicas, *d.Spec.Replicas+maxSurge(d)) {
		changed = true
	}
	return changed
}

// appendRevisionHistory adds old to the revision-history annotation,
// dropping the oldest entries beyond maxRevisionHistoryChars.
func appendRevisionHistory(rs *appsv1.ReplicaSet, old string) {
	history := rs.Annotations[revisionHistoryAnnotation]
	revisions := strings.Split(history, ",")
	if revisions[0] == "" {
		rs.Annotations[revisionHistoryAnnotation] = old
		return
	}
	total, start := len(history)+len(old)+1, 0
	for total > maxRevisionHistoryChars && start < len(revisions) {
		total -= len(revisions[start]) + 1
		start++
	}
	if total <= maxRevisionHistoryChars {
		rs.Annotations[revisionHistoryAnnotation] = strings.Join(append(revisions[start:], old), ",")
	}
}

func setReplicasAnnotations(rs *appsv1.ReplicaSet, desired, max int32) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range map[string]string{desiredReplicasAnnotation: strconv.Itoa(int(desired)), maxReplicasAnnotation: strconv.Itoa(int(max))} {
		if rs.Annotations[k] != v {
			rs.Annotations[k] = v
			changed = true
		}
	}
	return changed
}

func replicasAnnotationsNeedUpdate(rs *appsv1.ReplicaSet, desired, max int32) bool {
	return rs.Annotations[desiredReplicasAnnotation] != strconv.Itoa(int(desired)) ||
		rs.Annotations[maxReplicasAnnotation] != strconv.Itoa(int(max))
}

// annotationInt32 is a non-negative int32 annotation of rs.
func annotationInt32(rs *appsv1.ReplicaSet, key string) (int32, bool) {
	v, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || n > math.MaxInt32 {
		return 0, false
	}
	return int32(n), true
}

func isRollingUpdate(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType
}

// resolveFenceposts turns maxSurge (rounded up) and maxUnavailable
// (rounded down) into counts of desired; both 0 makes maxUnavailable 1.
func resolveFenceposts(surge, unavailable *intstr.IntOrString, desired int32) (int32, int32, error) {
	s, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(surge, intstr.FromInt32(0)), int(desired), true)
	if err != nil {
		return 0, 0, err
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(unavailable, intstr.FromInt32(0)), int(desired), false)
	if err != nil {
		return 0, 0, err
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u), nil
}

func maxSurge(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) {
		return 0
	}
	s, _, _ := resolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, *d.Spec.Replicas)
	return s
}

func maxUnavailable(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || *d.Spec.Replicas == 0 {
		return 0
	}
	_, u, _ := resolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, *d.Spec.Replicas)
	return min(u, *d.Spec.Replicas)
}

// equalIgnoreHash compares two templates without their pod-template-hash
// label.
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return apiequality.Semantic.DeepEqual(a, b)
}

// byCreation sorts ReplicaSets oldest first, then by name.
func byCreation(rss []*appsv1.ReplicaSet) {
	sort.SliceStable(rss, func(i, j int) bool {
		if rss[i].CreationTimestamp.Equal(&rss[j].CreationTimestamp) {
			return rss[i].Name < rss[j].Name
		}
		return rss[i].CreationTimestamp.Before(&rss[j].CreationTimestamp)
	})
}

// findNewReplicaSet is the oldest ReplicaSet whose template is the
// deployment's.
func findNewReplicaSet(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	byCreation(rss)
	for _, rs := range rss {
		if equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// findOldReplicaSets are the others.
func findOldReplicaSets(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	newRS := findNewReplicaSet(d, rss)
	var old []*appsv1.ReplicaSet
	for _, rs := range rss {
		if newRS == nil || rs.UID != newRS.UID {
			old = append(old, rs)
		}
	}
	return old
}

func activeReplicaSets(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && *rs.Spec.Replicas > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// sum adds up f over the ReplicaSets that exist.
func sum(rss []*appsv1.ReplicaSet, f func(*appsv1.ReplicaSet) int32) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += f(rs)
		}
	}
	return n
}

func specReplicas(rs *appsv1.ReplicaSet) int32      { return *rs.Spec.Replicas }
func statusReplicas(rs *appsv1.ReplicaSet) int32    { return rs.Status.Replicas }
func readyReplicas(rs *appsv1.ReplicaSet) int32     { return rs.Status.ReadyReplicas }
func availableReplicas(rs *appsv1.ReplicaSet) int32 { return rs.Status.AvailableReplicas }

// terminatingReplicas adds up the ReplicaSets' terminatingReplicas; nil
// when one that has been synced does not report it.
func terminatingReplicas(rss []*appsv1.ReplicaSet) *int32 {
	var n int32
	for _, rs := range rss {
		switch {
		case rs == nil, rs.Status.ObservedGeneration == 0 && rs.Status.TerminatingReplicas == nil:
		case rs.Status.TerminatingReplicas == nil:
			return nil
		default:
			n += *rs.Status.TerminatingReplicas
		}
	}
	return &n
}

func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

func hasRevisionHistoryLimit(d *appsv1.Deployment) bool {
	return d.Spec.RevisionHistoryLimit != nil && *d.Spec.RevisionHistoryLimit != math.MaxInt32
}

// complete: every replica updated and available, the generation observed.
func complete(d *appsv1.Deployment, s *appsv1.DeploymentStatus) bool {
	return s.UpdatedReplicas == *d.Spec.Replicas && s.Replicas == *d.Spec.Replicas &&
		s.AvailableReplicas == *d.Spec.Replicas && s.ObservedGeneration >= d.Generation
}

// progressing: more updated, ready or available replicas, or fewer old
// ones, than the deployment's status says.
func progressing(d *appsv1.Deployment, s *appsv1.DeploymentStatus) bool {
	old := d.Status
	return s.UpdatedReplicas > old.UpdatedReplicas || s.Replicas-s.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		s.ReadyReplicas > old.ReadyReplicas || s.AvailableReplicas > old.AvailableReplicas
}

// timedOut: the Progressing condition was last updated longer than the
// progress deadline ago.
func timedOut(d *appsv1.Deployment, s *appsv1.DeploymentStatus, now time.Time) bool {
	if !hasProgressDeadline(d) {
		return false
	}
	c := getCondition(*s, appsv1.DeploymentProgressing)
	switch {
	case c == nil, c.Reason == reasonNewRSAvailable:
		return false
	case c.Reason == reasonTimedOut:
		return true
	}
	return c.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Before(now)
}

// newRSNewReplicas is how many replicas the new ReplicaSet should have:
// as many as maxSurge allows over the others (rolling update), or all
// (recreate).
func newRSNewReplicas(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (int32, error) {
	switch d.Spec.Strategy.Type {
	case appsv1.RollingUpdateDeploymentStrategyType:
		surge, err := intstr.GetScaledValueFromIntOrPercent(d.Spec.Strategy.RollingUpdate.MaxSurge, int(*d.Spec.Replicas), true)
		if err != nil {
			return 0, err
		}
		current, maxTotal := sum(all, specReplicas), *d.Spec.Replicas+int32(surge)
		if current >= maxTotal {
			return *newRS.Spec.Replicas, nil
		}
		return *newRS.Spec.Replicas + min(maxTotal-current, *d.Spec.Replicas-*newRS.Spec.Replicas), nil
	case appsv1.RecreateDeploymentStrategyType:
		return *d.Spec.Replicas, nil
	}
	return 0, fmt.Errorf("deployment type %v isn't supported", d.Spec.Strategy.Type)
}

// saturated: the ReplicaSet has, wants and has available all the
// deployment's replicas.
func saturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, err := strconv.Atoi(rs.Annotations[desiredReplicasAnnotation])
	return err == nil && *rs.Spec.Replicas == *d.Spec.Replicas && int32(desired) == *d.Spec.Replicas &&
		rs.Status.AvailableReplicas == *d.Spec.Replicas
}
