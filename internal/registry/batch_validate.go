package registry

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// batch/v1 validation (upstream pkg/apis/batch/validation).

const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
	maxParallelismIndexedJob = 100000
	maxManagedByLength       = 63
)

func validateJob(obj runtime.Object) field.ErrorList {
	job := obj.(*batchv1.Job)
	errs := validateGeneratedSelector(job)
	errs = append(errs, validateJobSpecWithSelector(&job.Spec, specPath)...)
	if ptr.Deref(job.Spec.CompletionMode, "") == batchv1.IndexedCompletion && job.Spec.Completions != nil && *job.Spec.Completions > 0 {
		host := fmt.Sprintf("%s-%d", job.Name, *job.Spec.Completions-1)
		if msgs := validation.IsDNS1123Label(host); len(msgs) > 0 {
			errs = append(errs, field.Invalid(metadataPath.Child("name"), job.Name, fmt.Sprintf("will not able to create pod with invalid DNS label: %s", host)))
		}
	}
	return errs
}

// validateGeneratedSelector checks the labels and selector PrepareForCreate
// generated (unless the user chose a manual selector).
func validateGeneratedSelector(job *batchv1.Job) field.ErrorList {
	if ptr.Deref(job.Spec.ManualSelector, false) || job.Spec.Selector == nil {
		return nil
	}
	var errs field.ErrorList
	if job.UID == "" {
		errs = append(errs, field.Required(metadataPath.Child("uid"), ""))
	}
	tmplMeta := specPath.Child("template", "metadata")
	expected := map[string]string{}
	for _, l := range []struct{ key, value string }{
		{legacyControllerUIDLabel, string(job.UID)}, {legacyJobNameLabel, job.Name},
		{batchv1.ControllerUidLabel, string(job.UID)}, {batchv1.JobNameLabel, job.Name},
	} {
		errs = append(errs, validateHasLabel(job.Spec.Template.Labels, tmplMeta, l.key, l.value)...)
		expected[l.key] = l.value
	}
	if sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector); err == nil && !sel.Matches(labels.Set(expected)) {
		errs = append(errs, field.Invalid(selectorPath, job.Spec.Selector, "`selector` not auto-generated"))
	}
	return errs
}

func validateHasLabel(l map[string]string, path *field.Path, key, value string) field.ErrorList {
	actual, ok := l[key]
	if !ok {
		return field.ErrorList{field.Required(path.Child("labels").Key(key), fmt.Sprintf("must be '%s'", value))}
	}
	if actual != value {
		return field.ErrorList{field.Invalid(path.Child("labels").Key(key), l, fmt.Sprintf("must be '%s'", value))}
	}
	return nil
}

func validateJobSpecWithSelector(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	errs := validateJobSpec(spec, fldPath)
	if spec.Selector == nil {
		errs = append(errs, field.Required(fldPath.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	}
	if sel, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !sel.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(fldPath.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	return errs
}

func validateJobSpec(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	var ads *int32 // activeDeadlineSeconds is an int64; checked in its slot below
	for _, f := range []struct {
		name  string
		value *int32
	}{{"parallelism", spec.Parallelism}, {"completions", spec.Completions}, {"activeDeadlineSeconds", ads}, {"backoffLimit", spec.BackoffLimit},
		{"ttlSecondsAfterFinished", spec.TTLSecondsAfterFinished}, {"backoffLimitPerIndex", spec.BackoffLimitPerIndex}, {"maxFailedIndexes", spec.MaxFailedIndexes}} {
		switch {
		case f.name == "activeDeadlineSeconds" && spec.ActiveDeadlineSeconds != nil:
			errs = append(errs, apivalidation.ValidateNonnegativeField(*spec.ActiveDeadlineSeconds, fldPath.Child(f.name))...)
		case f.value != nil:
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*f.value), fldPath.Child(f.name))...)
		}
	}
	if spec.MaxFailedIndexes != nil && spec.BackoffLimitPerIndex == nil {
		errs = append(errs, field.Required(fldPath.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
	}
	if m := spec.ManagedBy; m != nil {
		errs = append(errs, validation.IsDomainPrefixedPath(fldPath.Child("managedBy"), *m)...)
		if len(*m) > maxManagedByLength {
			errs = append(errs, field.TooLong(fldPath.Child("managedBy"), *m, maxManagedByLength))
		}
	}
	errs = append(errs, validateCompletionMode(spec, fldPath)...)
	if spec.PodFailurePolicy != nil {
		errs = append(errs, validatePodFailurePolicy(spec, fldPath.Child("podFailurePolicy"))...)
	}
	if spec.SuccessPolicy != nil && ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
		errs = append(errs, field.Invalid(fldPath.Child("successPolicy"), *spec.SuccessPolicy, "requires indexed completion mode"))
	}
	if p := spec.PodReplacementPolicy; p != nil {
		if spec.PodFailurePolicy != nil && *p != batchv1.Failed {
			errs = append(errs, field.NotSupported(fldPath.Child("podReplacementPolicy"), *p, []batchv1.PodReplacementPolicy{batchv1.Failed}))
		} else if *p != batchv1.Failed && *p != batchv1.TerminatingOrFailed {
			errs = append(errs, field.NotSupported(fldPath.Child("podReplacementPolicy"), *p, []batchv1.PodReplacementPolicy{batchv1.Failed, batchv1.TerminatingOrFailed}))
		}
	}
	errs = append(errs, validatePodTemplateSpec(&spec.Template, fldPath.Child("template"))...)
	return append(errs, validateJobRestartPolicy(spec, fldPath.Child("template", "spec", "restartPolicy"))...)
}

func validateCompletionMode(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	mode := ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion)
	if spec.CompletionMode != nil && mode != batchv1.NonIndexedCompletion && mode != batchv1.IndexedCompletion {
		errs = append(errs, field.NotSupported(fldPath.Child("completionMode"), spec.CompletionMode, []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
	}
	if mode == batchv1.IndexedCompletion {
		if spec.Completions == nil {
			errs = append(errs, field.Required(fldPath.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
		}
		if p := spec.Parallelism; p != nil && *p > maxParallelismIndexedJob {
			errs = append(errs, field.Invalid(fldPath.Child("parallelism"), *p, fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismIndexedJob, batchv1.IndexedCompletion)))
		}
		if spec.Completions != nil && spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > *spec.Completions {
			errs = append(errs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "must be less than or equal to completions"))
		}
	}
	if mode == batchv1.NonIndexedCompletion {
		if spec.BackoffLimitPerIndex != nil {
			errs = append(errs, field.Invalid(fldPath.Child("backoffLimitPerIndex"), *spec.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if spec.MaxFailedIndexes != nil {
			errs = append(errs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "requires indexed completion mode"))
		}
	}
	return errs
}

func validateJobRestartPolicy(spec *batchv1.JobSpec, path *field.Path) field.ErrorList {
	switch p := spec.Template.Spec.RestartPolicy; {
	case p == corev1.RestartPolicyAlways || p == "":
		return field.ErrorList{field.Required(path, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever))}
	case p != corev1.RestartPolicyOnFailure && p != corev1.RestartPolicyNever:
		return field.ErrorList{field.NotSupported(path, p, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever})}
	case spec.PodFailurePolicy != nil && p != corev1.RestartPolicyNever:
		return field.ErrorList{field.Invalid(path, p, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever))}
	}
	return nil
}

func validatePodFailurePolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	rulesPath := fldPath.Child("rules")
	if n := len(spec.PodFailurePolicy.Rules); n > 20 {
		errs = append(errs, field.TooMany(rulesPath, n, 20))
	}
	actions := []batchv1.PodFailurePolicyAction{batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore}
	for i, r := range spec.PodFailurePolicy.Rules {
		rp := rulesPath.Index(i)
		switch {
		case r.Action == "":
			errs = append(errs, field.Required(rp.Child("action"), fmt.Sprintf("valid values: %q", actions)))
		case r.Action == batchv1.PodFailurePolicyActionFailIndex && spec.BackoffLimitPerIndex == nil:
			errs = append(errs, field.Invalid(rp.Child("action"), r.Action, "requires the backoffLimitPerIndex to be set"))
		case r.Action != batchv1.PodFailurePolicyActionCount && r.Action != batchv1.PodFailurePolicyActionFailIndex &&
			r.Action != batchv1.PodFailurePolicyActionFailJob && r.Action != batchv1.PodFailurePolicyActionIgnore:
			errs = append(errs, field.NotSupported(rp.Child("action"), r.Action, actions))
		}
		if r.OnExitCodes != nil && len(r.OnPodConditions) > 0 {
			errs = append(errs, field.Invalid(rp, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
		}
		if r.OnExitCodes == nil && len(r.OnPodConditions) == 0 {
			errs = append(errs, field.Invalid(rp, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
		}
	}
	return errs
}

// validateJobUpdate adds the immutability rules of a Job spec.
func validateJobUpdate(obj, old runtime.Object) field.ErrorList {
	job, oldJob := obj.(*batchv1.Job), old.(*batchv1.Job)
	spec, oldSpec := &job.Spec, &oldJob.Spec
	errs := validateJob(obj)
	errs = append(errs, validateCompletionsUpdate(spec, oldSpec)...)
	errs = append(errs, apivalidation.ValidateImmutableField(spec.Selector, oldSpec.Selector, specPath.Child("selector"))...)
	oldTemplate := oldSpec.Template.DeepCopy()
	if ptr.Deref(oldSpec.Suspend, false) && oldJob.Status.StartTime == nil {
		// A suspended job that never started may change its scheduling
		// directives.
		oldTemplate.Spec.NodeSelector = spec.Template.Spec.NodeSelector
		oldTemplate.Spec.Tolerations = spec.Template.Spec.Tolerations
		oldTemplate.Spec.SchedulingGates = spec.Template.Spec.SchedulingGates
		oldTemplate.Labels, oldTemplate.Annotations = spec.Template.Labels, spec.Template.Annotations
		if a := spec.Template.Spec.Affinity; a != nil {
			if oldTemplate.Spec.Affinity == nil {
				oldTemplate.Spec.Affinity = &corev1.Affinity{}
			}
			oldTemplate.Spec.Affinity.NodeAffinity = a.NodeAffinity
		} else if oldTemplate.Spec.Affinity != nil {
			if oldTemplate.Spec.Affinity.NodeAffinity = nil; *oldTemplate.Spec.Affinity == (corev1.Affinity{}) {
				oldTemplate.Spec.Affinity = nil
			}
		}
	}
	errs = append(errs, apivalidation.ValidateImmutableField(&spec.Template, oldTemplate, specPath.Child("template"))...)
	for _, f := range []struct {
		name     string
		new, old any
	}{{"completionMode", spec.CompletionMode, oldSpec.CompletionMode}, {"podFailurePolicy", spec.PodFailurePolicy, oldSpec.PodFailurePolicy},
		{"backoffLimitPerIndex", spec.BackoffLimitPerIndex, oldSpec.BackoffLimitPerIndex}, {"managedBy", spec.ManagedBy, oldSpec.ManagedBy},
		{"successPolicy", spec.SuccessPolicy, oldSpec.SuccessPolicy}} {
		errs = append(errs, apivalidation.ValidateImmutableField(f.new, f.old, specPath.Child(f.name))...)
	}
	return errs
}

// validateCompletionsUpdate keeps completions immutable, except that an
// Indexed Job may change it together with parallelism (elastic jobs).
func validateCompletionsUpdate(spec, oldSpec *batchv1.JobSpec) field.ErrorList {
	path := specPath.Child("completions")
	if ptr.Deref(spec.CompletionMode, "") != batchv1.IndexedCompletion {
		return apivalidation.ValidateImmutableField(spec.Completions, oldSpec.Completions, path)
	}
	if apiequality.Semantic.DeepEqual(spec.Completions, oldSpec.Completions) || spec.Completions == nil {
		return nil
	}
	if *spec.Completions != ptr.Deref(spec.Parallelism, 0) {
		return field.ErrorList{field.Invalid(path, spec.Completions, "can only be modified in tandem with spec.parallelism")}
	}
	return nil
}

func validateCronJob(obj runtime.Object) field.ErrorList {
	cj := obj.(*batchv1.CronJob)
	errs := validateCronJobSpec(&cj.Spec, nil)
	if len(cj.Name) > validation.DNS1035LabelMaxLength-11 {
		errs = append(errs, field.Invalid(metadataPath.Child("name"), cj.Name, "must be no more than 52 characters"))
	}
	return errs
}

func validateCronJobUpdate(obj, old runtime.Object) field.ErrorList {
	return validateCronJobSpec(&obj.(*batchv1.CronJob).Spec, &old.(*batchv1.CronJob).Spec)
}

func validateCronJobSpec(spec, oldSpec *batchv1.CronJobSpec) field.ErrorList {
	var errs field.ErrorList
	schedPath := specPath.Child("schedule")
	if spec.Schedule == "" {
		errs = append(errs, field.Required(schedPath, ""))
	} else {
		if err := parseCronSchedule(spec.Schedule); err != nil {
			errs = append(errs, field.Invalid(schedPath, spec.Schedule, err.Error()))
		}
		allowTZ := oldSpec != nil && strings.Contains(oldSpec.Schedule, "TZ")
		switch {
		case allowTZ && strings.Contains(spec.Schedule, "TZ") && spec.TimeZone != nil:
			errs = append(errs, field.Invalid(schedPath, spec.Schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
		case !allowTZ && strings.Contains(spec.Schedule, "TZ"):
			errs = append(errs, field.Invalid(schedPath, spec.Schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
		}
	}
	if s := spec.StartingDeadlineSeconds; s != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(*s, specPath.Child("startingDeadlineSeconds"))...)
	}
	if oldSpec == nil || !equalStringPtr(oldSpec.TimeZone, spec.TimeZone) {
		errs = append(errs, validateTimeZone(spec.TimeZone, specPath.Child("timeZone"))...)
	}
	switch spec.ConcurrencyPolicy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
	case "":
		errs = append(errs, field.Required(specPath.Child("concurrencyPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(specPath.Child("concurrencyPolicy"), spec.ConcurrencyPolicy,
			[]batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}))
	}
	tp := specPath.Child("jobTemplate")
	errs = append(errs, validateJobSpec(&spec.JobTemplate.Spec, tp.Child("spec"))...)
	if spec.JobTemplate.Spec.Selector != nil {
		errs = append(errs, field.Invalid(tp.Child("spec", "selector"), spec.JobTemplate.Spec.Selector, "`selector` will be auto-generated"))
	}
	if m := spec.JobTemplate.Spec.ManualSelector; m != nil && *m {
		errs = append(errs, field.NotSupported(tp.Child("spec", "manualSelector"), m, []string{"nil", "false"}))
	}
	for _, f := range []struct {
		name  string
		value *int32
	}{{"successfulJobsHistoryLimit", spec.SuccessfulJobsHistoryLimit}, {"failedJobsHistoryLimit", spec.FailedJobsHistoryLimit}} {
		if f.value != nil {
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*f.value), specPath.Child(f.name))...)
		}
	}
	return errs
}

func validateTimeZone(tz *string, path *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(path, tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZonePart(part) {
			return field.ErrorList{field.Invalid(path, tz, fmt.Sprintf("unknown time zone %s", *tz))}
		}
	}
	var errs field.ErrorList
	if strings.EqualFold(*tz, "Local") {
		errs = append(errs, field.Invalid(path, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		errs = append(errs, field.Invalid(path, tz, err.Error()))
	}
	return errs
}

// validTimeZonePart: 1-14 characters of letters, digits, '.', '-', '_', '+'.
func validTimeZonePart(p string) bool {
	if len(p) < 1 || len(p) > 14 {
		return false
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+", r)) {
			return false
		}
	}
	return true
}
