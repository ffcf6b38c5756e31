package registry

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Defaults of the apps/v1 workloads (upstream pkg/apis/apps/v1/defaults.go);
// the pod templates get the PodSpec defaults.

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
	if u.Type == appsv1.RollingUpdateStatefulSetStrategyType && u.RollingUpdate != nil {
		if u.RollingUpdate.Partition == nil {
			u.RollingUpdate.Partition = ptr.To[int32](0)
		}
		// MaxUnavailableStatefulSet is on by default from 1.37 (the
		// defaults read the 1.37 defaults of the gates, as the pods' do)
		if u.RollingUpdate.MaxUnavailable == nil && (defaultGates{}).Enabled(gateMaxUnavailableStatefulSet) {
			u.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
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

// gateMaxUnavailableStatefulSet lets a StatefulSet's rolling update take
// down more than one pod at a time (spec.updateStrategy.rollingUpdate.maxUnavailable).
const gateMaxUnavailableStatefulSet = "MaxUnavailableStatefulSet"
