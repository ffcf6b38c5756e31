package registry

import (
	"math"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Defaults of the apps/v1 and batch/v1 workloads (upstream
// pkg/apis/apps/v1/defaults.go and pkg/apis/batch/v1/defaults.go); the pod
// templates get the PodSpec defaults.

func defaultDeployment(obj runtime.Object) {
	d := obj.(*appsv1.Deployment)
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptr.To[int32](1)
	}
	s := &d.Spec.Strategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("25%"))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptr.To(intstr.FromString("25%"))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	}
	defaultPodTemplateSpec(&d.Spec.Template)
}

func defaultReplicaSet(obj runtime.Object) {
	rs := obj.(*appsv1.ReplicaSet)
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = ptr.To[int32](1)
	}
	defaultPodTemplateSpec(&rs.Spec.Template)
}

func defaultDaemonSet(obj runtime.Object) {
	ds := obj.(*appsv1.DaemonSet)
	u := &ds.Spec.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if u.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if u.RollingUpdate.MaxUnavailable == nil {
			u.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
		if u.RollingUpdate.MaxSurge == nil {
			u.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	defaultPodTemplateSpec(&ds.Spec.Template)
}

func defaultStatefulSet(obj runtime.Object) {
	ss := obj.(*appsv1.StatefulSet)
	if ss.Spec.PodManagementPolicy == "" {
		ss.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	u := &ss.Spec.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if u.Type == appsv1.RollingUpdateStatefulSetStrategyType && u.RollingUpdate != nil && u.RollingUpdate.Partition == nil {
		u.RollingUpdate.Partition = ptr.To[int32](0)
	}
	if ss.Spec.PersistentVolumeClaimRetentionPolicy == nil {
		ss.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if p := ss.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted == "" {
		p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if p := ss.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenScaled == "" {
		p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if ss.Spec.Replicas == nil {
		ss.Spec.Replicas = ptr.To[int32](1)
	}
	if ss.Spec.RevisionHistoryLimit == nil {
		ss.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	defaultPodTemplateSpec(&ss.Spec.Template)
	// The claim templates are whole PVC objects to the generated defaulters,
	// status phase included.
	for i := range ss.Spec.VolumeClaimTemplates {
		defaultPVC(&ss.Spec.VolumeClaimTemplates[i])
	}
}

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
