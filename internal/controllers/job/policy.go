package job

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// matchPodFailurePolicy applies the first rule matching a failed pod: it
// returns the Job's failure message for a FailJob rule, whether the
// failure counts toward the backoff limit (not for Ignore), and the
// action matched (nil when none).
func matchPodFailurePolicy(policy *batchv1.PodFailurePolicy, pod *corev1.Pod) (*string, bool, *batchv1.PodFailurePolicyAction) {
	if policy == nil {
		return nil, true, nil
	}
	for i, rule := range policy.Rules {
		var failJobMessage string
		switch {
		case rule.OnExitCodes != nil:
			cs := matchOnExitCodes(&pod.Status, rule.OnExitCodes)
			if cs == nil {
				continue
			}
			failJobMessage = fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
				cs.Name, pod.Namespace, pod.Name, cs.State.Terminated.ExitCode, rule.Action, i)
		case rule.OnPodConditions != nil:
			cond := matchOnPodConditions(&pod.Status, rule.OnPodConditions)
			if cond == nil {
				continue
			}
			failJobMessage = fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d",
				pod.Namespace, pod.Name, cond.Type, rule.Action, i)
		default:
			continue
		}
		action := rule.Action
		switch action {
		case batchv1.PodFailurePolicyActionIgnore:
			return nil, false, &action
		case batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionCount:
			return nil, true, &action
		case batchv1.PodFailurePolicyActionFailJob:
			return &failJobMessage, true, &action
		}
	}
	return nil, true, nil
}

func matchOnExitCodes(status *corev1.PodStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	if cs := matchingContainer(status.ContainerStatuses, req); cs != nil {
		return cs
	}
	return matchingContainer(status.InitContainerStatuses, req)
}

func matchOnPodConditions(status *corev1.PodStatus, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *corev1.PodCondition {
	for i, c := range status.Conditions {
		for _, p := range patterns {
			if c.Type == p.Type && c.Status == p.Status {
				return &status.Conditions[i]
			}
		}
	}
	return nil
}

func matchingContainer(statuses []corev1.ContainerStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	for i, cs := range statuses {
		t := cs.State.Terminated
		if t == nil || t.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {
			continue
		}
		in := slices.Contains(req.Values, t.ExitCode)
		if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in) || (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in) {
			return &statuses[i]
		}
	}
	return nil
}

// matchSuccessPolicy reports the first success policy rule the succeeded
// indexes meet, in the SuccessCriteriaMet condition's message.
func matchSuccessPolicy(policy *batchv1.SuccessPolicy, completions int32, succeeded intervals) (string, bool) {
	if policy == nil || len(succeeded) == 0 {
		return "", false
	}
	for i, rule := range policy.Rules {
		met := false
		if rule.SucceededIndexes != nil {
			required := parseIntervals(*rule.SucceededIndexes, int(completions))
			if len(required) == 0 {
				continue
			}
			met = matchSucceededIndexesRule(required, succeeded, rule.SucceededCount)
		} else if rule.SucceededCount != nil {
			met = succeeded.total() >= int(*rule.SucceededCount)
		}
		if met {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

// matchSucceededIndexesRule: every required index succeeded, or at least
// count of them did.
func matchSucceededIndexesRule(required, succeeded intervals, count *int32) bool {
	contains, r, s := 0, 0, 0
	for r < len(required) && s < len(succeeded) {
		if overlap := min(required[r].Last, succeeded[s].Last) - max(required[r].First, succeeded[s].First) + 1; overlap > 0 {
			contains += overlap
		}
		switch {
		case succeeded[s].Last < required[r].Last:
			s++
		case succeeded[s].Last > required[r].Last:
			r++
		default:
			s++
			r++
		}
	}
	return contains == required.total() || (count != nil && contains >= int(*count))
}

func findCondition(list []batchv1.JobCondition, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range list {
		if list[i].Type == t {
			return &list[i]
		}
	}
	return nil
}

func successCriteriaMet(j *batchv1.Job) *batchv1.JobCondition {
	if c := findCondition(j.Status.Conditions, batchv1.JobSuccessCriteriaMet); c != nil && c.Status == corev1.ConditionTrue {
		return c
	}
	return nil
}

func isSuccessCriteriaMet(c *batchv1.JobCondition) bool {
	return c != nil && c.Type == batchv1.JobSuccessCriteriaMet && c.Status == corev1.ConditionTrue
}

// isFinished: the Job has a Complete or Failed condition True.
func isFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
