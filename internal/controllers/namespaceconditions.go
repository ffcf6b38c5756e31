package controllers

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The conditions a Terminating namespace shows while the namespace
// controller empties it, as kube-controller-manager's namespace deleter
// writes them: each of the five types is False with its "ok" reason until
// a pass finds otherwise.

// namespaceConditionTypes are the condition types the controller keeps,
// in the order it first adds them.
var namespaceConditionTypes = []corev1.NamespaceConditionType{
	corev1.NamespaceDeletionDiscoveryFailure,
	corev1.NamespaceDeletionGVParsingFailure,
	corev1.NamespaceDeletionContentFailure,
	corev1.NamespaceContentRemaining,
	corev1.NamespaceFinalizersRemaining,
}

// namespaceConditionsOK are the reason and message of each type when
// nothing is wrong.
var namespaceConditionsOK = map[corev1.NamespaceConditionType][2]string{
	corev1.NamespaceDeletionDiscoveryFailure: {"ResourcesDiscovered", "All resources successfully discovered"},
	corev1.NamespaceDeletionGVParsingFailure: {"ParsedGroupVersions", "All legacy kube types successfully parsed"},
	corev1.NamespaceDeletionContentFailure:   {"ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	corev1.NamespaceContentRemaining:         {"ContentRemoved", "All content successfully removed"},
	corev1.NamespaceFinalizersRemaining:      {"ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

// namespaceContent is what a pass over a namespace found: the objects left
// of each resource ("configmaps." — resource.group) and on each finalizer,
// and the errors deleting them.
type namespaceContent struct {
	remaining  map[string]int
	finalizers map[string]int
	errs       []error
}

func newNamespaceContent() *namespaceContent {
	return &namespaceContent{remaining: map[string]int{}, finalizers: map[string]int{}}
}

// left says whether objects remain.
func (c *namespaceContent) left() bool { return len(c.remaining) > 0 }

// conditions are the True conditions the pass calls for; withTotals adds
// those of the objects left (a pass that stops at remaining pods reports
// only its errors).
func (c *namespaceContent) conditions(withTotals bool) []corev1.NamespaceCondition {
	var out []corev1.NamespaceCondition
	if len(c.errs) > 0 {
		msgs := make([]string, 0, len(c.errs))
		for _, err := range c.errs {
			msgs = append(msgs, err.Error())
		}
		sort.Strings(msgs)
		out = append(out, trueCondition(corev1.NamespaceDeletionContentFailure, "ContentDeletionFailed",
			fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(c.errs), strings.Join(msgs, ", "))))
	}
	if !withTotals {
		return out
	}
	if len(c.remaining) > 0 {
		out = append(out, trueCondition(corev1.NamespaceContentRemaining, "SomeResourcesRemain",
			"Some resources are remaining: "+countsList(c.remaining, "%s has %d resource instances")))
	}
	if len(c.finalizers) > 0 {
		out = append(out, trueCondition(corev1.NamespaceFinalizersRemaining, "SomeFinalizersRemain",
			"Some content in the namespace has finalizers remaining: "+countsList(c.finalizers, "%s in %d resource instances")))
	}
	return out
}

// countsList formats each count and joins them sorted.
func countsList(counts map[string]int, format string) string {
	var parts []string
	for name, n := range counts {
		parts = append(parts, fmt.Sprintf(format, name, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func trueCondition(t corev1.NamespaceConditionType, reason, message string) corev1.NamespaceCondition {
	return corev1.NamespaceCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message}
}

// mergeNamespaceConditions sets each of the controller's condition types
// in status to its condition in found, or to its "ok" condition: a type
// missing is appended, one whose status changes gets now as its
// transition time. It says whether status changed.
func mergeNamespaceConditions(status *corev1.NamespaceStatus, found []corev1.NamespaceCondition, now metav1.Time) bool {
	changed := false
	for _, t := range namespaceConditionTypes {
		want := corev1.NamespaceCondition{Type: t, Status: corev1.ConditionFalse, Reason: namespaceConditionsOK[t][0], Message: namespaceConditionsOK[t][1]}
		for _, c := range found {
			if c.Type == t {
				want = c
			}
		}
		want.LastTransitionTime = now
		i := namespaceConditionIndex(status.Conditions, t)
		if i < 0 {
			status.Conditions = append(status.Conditions, want)
			changed = true
			continue
		}
		old := &status.Conditions[i]
		if old.Status == want.Status && old.Reason == want.Reason && old.Message == want.Message {
			continue
		}
		if old.Status != want.Status {
			old.LastTransitionTime = now
		}
		old.Status, old.Reason, old.Message = want.Status, want.Reason, want.Message
		changed = true
	}
	return changed
}

func namespaceConditionIndex(conditions []corev1.NamespaceCondition, t corev1.NamespaceConditionType) int {
	for i := range conditions {
		if conditions[i].Type == t {
			return i
		}
	}
	return -1
}
