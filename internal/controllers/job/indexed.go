package job

import (
	"math"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

const (
	completionIndexEnvName = "JOB_COMPLETION_INDEX"
	noIndex                = -1
	// maxGeneratedNameLength is how long a generateName may be before the
	// server's 5 random characters (upstream's names.MaxGeneratedNameLength).
	maxGeneratedNameLength = 63 - 5
)

func isIndexed(j *batchv1.Job) bool {
	return j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
}

func hasBackoffLimitPerIndex(j *batchv1.Job) bool { return j.Spec.BackoffLimitPerIndex != nil }

// interval is a run of indexes, First to Last included.
type interval struct{ First, Last int }

// intervals are sorted, disjoint and not adjacent, as status.completedIndexes
// writes them ("1,3-5,7").
type intervals []interval

// withIndexes merges sorted indexes in.
func (oi intervals) withIndexes(ixs []int) intervals {
	add := make(intervals, len(ixs))
	for i, ix := range ixs {
		add[i] = interval{ix, ix}
	}
	return oi.merge(add)
}

func (oi intervals) merge(other intervals) intervals {
	var out intervals
	push := func(iv interval) {
		if n := len(out); n == 0 || iv.First > out[n-1].Last+1 {
			out = append(out, iv)
		} else if out[n-1].Last < iv.Last {
			out[n-1].Last = iv.Last
		}
	}
	i, j := 0, 0
	for i < len(oi) && j < len(other) {
		if oi[i].First < other[j].First {
			push(oi[i])
			i++
		} else {
			push(other[j])
			j++
		}
	}
	for ; i < len(oi); i++ {
		push(oi[i])
	}
	for ; j < len(other); j++ {
		push(other[j])
	}
	return out
}

func (oi intervals) total() int {
	n := 0
	for _, iv := range oi {
		n += iv.Last - iv.First + 1
	}
	return n
}

// String writes "0,2-4,6,7": a run of two as two numbers.
func (oi intervals) String() string {
	var b strings.Builder
	for _, iv := range oi {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(iv.First))
		switch {
		case iv.Last == iv.First+1:
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(iv.Last))
		case iv.Last > iv.First:
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(iv.Last))
		}
	}
	return b.String()
}

func (oi intervals) has(ix int) bool {
	i, _ := slices.BinarySearchFunc(oi, ix, func(iv interval, ix int) int {
		if iv.Last < ix {
			return -1
		}
		return 1
	})
	return i < len(oi) && oi[i].First <= ix
}

// parseIntervals reads a completedIndexes/failedIndexes string, dropping
// indexes from completions on and skipping corrupt parts.
func parseIntervals(s string, completions int) intervals {
	if s == "" {
		return nil
	}
	var out intervals
	for _, part := range strings.Split(s, ",") {
		limits := strings.Split(part, "-")
		var iv interval
		var err error
		if iv.First, err = strconv.Atoi(limits[0]); err != nil {
			continue
		}
		if iv.First >= completions {
			break
		}
		iv.Last = iv.First
		if len(limits) > 1 {
			if iv.Last, err = strconv.Atoi(limits[1]); err != nil {
				continue
			}
			iv.Last = min(iv.Last, completions-1)
		}
		if n := len(out); n > 0 && out[n-1].Last == iv.First-1 {
			out[n-1].Last = iv.Last
		} else {
			out = append(out, iv)
		}
	}
	return out
}

// completionIndex is the pod's batch.kubernetes.io/job-completion-index
// annotation, or noIndex.
func completionIndex(p *corev1.Pod) int {
	v, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return noIndex
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return noIndex
	}
	return i
}

func validIndex(j *batchv1.Job, ix int) bool {
	return ix != noIndex && ix < int(*j.Spec.Completions)
}

// succeededIndexes are the indexes the status has and those with a
// succeeded pod still carrying the tracking finalizer.
func succeededIndexes(j *batchv1.Job, pods []*corev1.Pod) (prev, cur intervals) {
	prev = parseIntervals(j.Status.CompletedIndexes, int(*j.Spec.Completions))
	added := sets.New[int]()
	for _, p := range pods {
		if ix := completionIndex(p); p.Status.Phase == corev1.PodSucceeded && validIndex(j, ix) && hasTrackingFinalizer(p) {
			added.Insert(ix)
		}
	}
	return prev, prev.withIndexes(sets.List(added))
}

// failedIndexes are the indexes the status has and those whose pod failed
// once too often (backoffLimitPerIndex) or by a FailIndex rule.
func failedIndexes(j *batchv1.Job, pods []*corev1.Pod) *intervals {
	var prev intervals
	if j.Status.FailedIndexes != nil {
		prev = parseIntervals(*j.Status.FailedIndexes, int(*j.Spec.Completions))
	}
	added := sets.New[int]()
	for _, p := range pods {
		if ix := completionIndex(p); validIndex(j, ix) && hasTrackingFinalizer(p) && isIndexFailed(j, p) {
			added.Insert(ix)
		}
	}
	out := prev.withIndexes(sets.List(added))
	return &out
}

func isIndexFailed(j *batchv1.Job, p *corev1.Pod) bool {
	counted := false
	if isPodFailed(p, j) {
		counted = true
		if j.Spec.PodFailurePolicy != nil {
			_, countFailed, action := matchPodFailurePolicy(j.Spec.PodFailurePolicy, p)
			if action != nil && *action == batchv1.PodFailurePolicyActionFailIndex {
				return true
			}
			counted = countFailed
		}
	}
	return counted && indexFailureCount(p) >= *j.Spec.BackoffLimitPerIndex
}

// firstPendingIndexes are the count lowest indexes below completions that
// have no active (or, when only failed pods are replaced, terminating) pod
// and have not succeeded or failed.
func firstPendingIndexes(sc *syncContext, count, completions int) []int {
	if count == 0 {
		return nil
	}
	taken := sc.succeededIndexes.withIndexes(sets.List(podIndexes(sc.activePods)))
	if onlyReplaceFailedPods(sc.job) {
		taken = taken.withIndexes(sets.List(podIndexes(terminatingPods(sc.pods))))
	}
	if sc.failedIndexes != nil {
		taken = taken.merge(*sc.failedIndexes)
	}
	var out []int
	candidate := 0
	for _, iv := range taken {
		for ; candidate < completions && len(out) < count && candidate < iv.First; candidate++ {
			out = append(out, candidate)
		}
		candidate = max(candidate, iv.Last+1)
	}
	for ; candidate < completions && len(out) < count; candidate++ {
		out = append(out, candidate)
	}
	return out
}

func podIndexes(pods []*corev1.Pod) sets.Set[int] {
	out := sets.New[int]()
	for _, p := range pods {
		if ix := completionIndex(p); ix != noIndex {
			out.Insert(ix)
		}
	}
	return out
}

func sortByIndex(pods []*corev1.Pod) {
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int { return completionIndex(a) - completionIndex(b) })
}

// duplicateIndexPodsForRemoval splits active pods of an Indexed Job: pods
// without an index or beyond completions, and all but the most useful pod
// of a repeated index, are to remove; one pod per index is left.
func duplicateIndexPodsForRemoval(pods []*corev1.Pod, completions int) (rm, left []*corev1.Pod) {
	sortByIndex(pods)
	start := 0
	for i := 0; i <= len(pods); i++ {
		if i < len(pods) && completionIndex(pods[i]) >= completions {
			rm = append(rm, pods[i:]...)
			if i > start {
				rm, left = sameIndexForRemoval(rm, left, pods[start:i], completionIndex(pods[start]))
			}
			return rm, left
		}
		if i == len(pods) || completionIndex(pods[i]) != completionIndex(pods[start]) {
			if i > start {
				rm, left = sameIndexForRemoval(rm, left, pods[start:i], completionIndex(pods[start]))
			}
			start = i
		}
	}
	return rm, left
}

func sameIndexForRemoval(rm, left, pods []*corev1.Pod, ix int) ([]*corev1.Pod, []*corev1.Pod) {
	if len(pods) == 0 {
		return rm, left
	}
	if ix == noIndex {
		return append(rm, pods...), left
	}
	if len(pods) == 1 {
		return rm, append(left, pods[0])
	}
	sortActivePods(pods)
	return append(rm, pods[:len(pods)-1]...), append(left, pods[len(pods)-1])
}

// podsWithDelayedDeletionPerIndex are, per index with no active,
// succeeded or failed pod, its latest failed pod still carrying the
// finalizer: kept until its replacement, which inherits its failure
// counts, is created.
func podsWithDelayedDeletionPerIndex(sc *syncContext) map[int]*corev1.Pod {
	active := podIndexes(sc.activePods)
	out := map[int]*corev1.Pod{}
	for _, p := range validPods(sc, nil, nil) {
		ix := completionIndex(p)
		if !isPodFailed(p, sc.job) || !validIndex(sc.job, ix) {
			continue
		}
		if sc.succeededIndexes.has(ix) || (sc.failedIndexes != nil && sc.failedIndexes.has(ix)) || active.Has(ix) {
			continue
		}
		if last, ok := out[ix]; !ok || (absoluteFailureCount(last) <= absoluteFailureCount(p) && !finishedTime(p).Before(finishedTime(last))) {
			out[ix] = p
		}
	}
	return out
}

func indexFailureCount(p *corev1.Pod) int32 {
	return annotationInt32(p, batchv1.JobIndexFailureCountAnnotation)
}

func absoluteFailureCount(p *corev1.Pod) int32 {
	return indexFailureCount(p) + annotationInt32(p, batchv1.JobIndexIgnoredFailureCountAnnotation)
}

func annotationInt32(p *corev1.Pod, name string) int32 {
	v, err := strconv.Atoi(p.Annotations[name])
	if err != nil || v < 0 || v > math.MaxInt32 {
		return 0
	}
	return int32(v)
}

// addIndexFailureCounts writes, on the replacement of failed, the failure
// counts of its index so far.
func addIndexFailureCounts(t *corev1.PodTemplateSpec, j *batchv1.Job, failed *corev1.Pod) {
	var count, ignored int32
	if failed != nil {
		count, ignored = indexFailureCount(failed), annotationInt32(failed, batchv1.JobIndexIgnoredFailureCountAnnotation)
		countFailed := true
		if j.Spec.PodFailurePolicy != nil {
			_, countFailed, _ = matchPodFailurePolicy(j.Spec.PodFailurePolicy, failed)
		}
		if countFailed {
			count++
		} else {
			ignored++
		}
	}
	t.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(count))
	if ignored > 0 {
		t.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(ignored))
	}
}

// addCompletionIndexEnv gives every container JOB_COMPLETION_INDEX from
// the pod's completion-index label, unless it has one.
func addCompletionIndexEnv(t *corev1.PodTemplateSpec) {
	add := func(c *corev1.Container) {
		for _, e := range c.Env {
			if e.Name == completionIndexEnvName {
				return
			}
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: completionIndexEnvName, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + batchv1.JobCompletionIndexAnnotation + "']"}}})
	}
	for i := range t.Spec.InitContainers {
		add(&t.Spec.InitContainers[i])
	}
	for i := range t.Spec.Containers {
		add(&t.Spec.Containers[i])
	}
}

// indexedTemplate is the template of index ix's pod: its index as
// annotation and label, hostname "<job>-<ix>".
func indexedTemplate(base *corev1.PodTemplateSpec, j *batchv1.Job, ix int) *corev1.PodTemplateSpec {
	t := base.DeepCopy()
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Annotations[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(ix)
	t.Labels[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(ix)
	t.Spec.Hostname = j.Name + "-" + strconv.Itoa(ix)
	return t
}

// generateNameWithIndex is "<job>-<ix>-", the job's name cut so that the
// whole fits a generated name.
func generateNameWithIndex(jobName string, ix int) string {
	suffix := "-" + strconv.Itoa(ix) + "-"
	prefix := jobName + suffix
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength-len(suffix)] + suffix
	}
	return prefix
}
