package registry

import (
	"math"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Defaults of the batch/v1 workloads (upstream
// pkg/apis/batch/v1/defaults.go); the pod templates get the PodSpec defaults.

func defaultJob(obj runtime.Object) {
	job := obj.(*batchv1.Job)
	spec := &job.Spec
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptr.To[int32](1)
		spec.Parallelism = ptr.To[int32](1)
	}
	if spec.Parallelism == nil {
		spec.Parallelism = ptr.To[int32](1)
	}
	if spec.BackoffLimit == nil {
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = ptr.To[int32](math.MaxInt32)
		} else {
			spec.BackoffLimit = ptr.To[int32](6)
		}
	}
	if labels := spec.Template.Labels; labels != nil && len(job.Labels) == 0 {
		job.Labels = labels
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.PodReplacementPolicy == nil {
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		} else {
			spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}
	}
	if spec.ManualSelector == nil {
		spec.ManualSelector = ptr.To(false)
	}
	defaultJobSpecNested(spec)
}

// defaultJobSpecNested defaults what the generated defaulters reach inside a
// JobSpec, for Jobs and CronJob job templates alike.
func defaultJobSpecNested(spec *batchv1.JobSpec) {
	if spec.PodFailurePolicy != nil {
		for i := range spec.PodFailurePolicy.Rules {
			for j := range spec.PodFailurePolicy.Rules[i].OnPodConditions {
				if c := &spec.PodFailurePolicy.Rules[i].OnPodConditions[j]; c.Status == "" {
					c.Status = corev1.ConditionTrue
				}
			}
		}
	}
	defaultPodTemplateSpec(&spec.Template)
}

func defaultCronJob(obj runtime.Object) {
	cj := obj.(*batchv1.CronJob)
	if cj.Spec.ConcurrencyPolicy == "" {
		cj.Spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if cj.Spec.Suspend == nil {
		cj.Spec.Suspend = ptr.To(false)
	}
	if cj.Spec.SuccessfulJobsHistoryLimit == nil {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if cj.Spec.FailedJobsHistoryLimit == nil {
		cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	defaultJobSpecNested(&cj.Spec.JobTemplate.Spec)
}
