package noderestriction

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Upstream prints the difference of the claims as the JSON of its internal
// types, which have no JSON tags: the structs below have the fields of
// those types, in their order, so that the message is the same.

type internalPVC struct {
	metav1.ObjectMeta
	Spec   internalPVCSpec
	Status internalPVCStatus
}

type internalPVCSpec struct {
	AccessModes               []corev1.PersistentVolumeAccessMode
	Selector                  *metav1.LabelSelector
	Resources                 internalResources
	VolumeName                string
	StorageClassName          *string
	VolumeMode                *corev1.PersistentVolumeMode
	DataSource                *internalLocalRef
	DataSourceRef             *internalRef
	VolumeAttributesClassName *string
}

type internalResources struct {
	Limits   corev1.ResourceList
	Requests corev1.ResourceList
}

type internalLocalRef struct {
	APIGroup *string
	Kind     string
	Name     string
}

type internalRef struct {
	APIGroup  *string
	Kind      string
	Name      string
	Namespace *string
}

type internalPVCStatus struct {
	Phase                            corev1.PersistentVolumeClaimPhase
	AccessModes                      []corev1.PersistentVolumeAccessMode
	Capacity                         corev1.ResourceList
	Conditions                       []internalPVCCondition
	AllocatedResources               corev1.ResourceList
	AllocatedResourceStatuses        map[corev1.ResourceName]corev1.ClaimResourceStatus
	CurrentVolumeAttributesClassName *string
	ModifyVolumeStatus               *internalModifyStatus
	HealthStatus                     *internalHealthStatus
}

type internalPVCCondition struct {
	Type               corev1.PersistentVolumeClaimConditionType
	Status             corev1.ConditionStatus
	LastProbeTime      metav1.Time
	LastTransitionTime metav1.Time
	Reason             string
	Message            string
}

type internalModifyStatus struct {
	TargetVolumeAttributesClassName string
	Status                          corev1.PersistentVolumeClaimModifyVolumeStatus
}

type internalHealthStatus struct {
	HealthConditions   []internalHealthCondition
	LastTransitionTime metav1.Time
}

type internalHealthCondition struct {
	Status  corev1.VolumeHealthStatusType
	Reason  string
	Message string
}

// internalPVCOf is pvc in the shape of the internal type. Its type meta is
// left out: upstream's internal objects have none.
func internalPVCOf(pvc *corev1.PersistentVolumeClaim) *internalPVC {
	return &internalPVC{ObjectMeta: pvc.ObjectMeta, Spec: internalSpecOf(&pvc.Spec), Status: internalStatusOf(&pvc.Status)}
}

func internalSpecOf(s *corev1.PersistentVolumeClaimSpec) internalPVCSpec {
	out := internalPVCSpec{
		AccessModes: s.AccessModes, Selector: s.Selector,
		Resources:  internalResources{Limits: s.Resources.Limits, Requests: s.Resources.Requests},
		VolumeName: s.VolumeName, StorageClassName: s.StorageClassName, VolumeMode: s.VolumeMode,
		VolumeAttributesClassName: s.VolumeAttributesClassName,
	}
	if d := s.DataSource; d != nil {
		out.DataSource = &internalLocalRef{APIGroup: d.APIGroup, Kind: d.Kind, Name: d.Name}
	}
	if d := s.DataSourceRef; d != nil {
		out.DataSourceRef = &internalRef{APIGroup: d.APIGroup, Kind: d.Kind, Name: d.Name, Namespace: d.Namespace}
	}
	return out
}

func internalStatusOf(s *corev1.PersistentVolumeClaimStatus) internalPVCStatus {
	out := internalPVCStatus{
		Phase: s.Phase, AccessModes: s.AccessModes, Capacity: s.Capacity,
		AllocatedResources: s.AllocatedResources, AllocatedResourceStatuses: s.AllocatedResourceStatuses,
		CurrentVolumeAttributesClassName: s.CurrentVolumeAttributesClassName,
	}
	if s.Conditions != nil {
		out.Conditions = make([]internalPVCCondition, 0, len(s.Conditions))
	}
	for _, c := range s.Conditions {
		out.Conditions = append(out.Conditions, internalPVCCondition{Type: c.Type, Status: c.Status,
			LastProbeTime: c.LastProbeTime, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	if m := s.ModifyVolumeStatus; m != nil {
		out.ModifyVolumeStatus = &internalModifyStatus{TargetVolumeAttributesClassName: m.TargetVolumeAttributesClassName, Status: m.Status}
	}
	if h := s.HealthStatus; h != nil {
		out.HealthStatus = &internalHealthStatus{LastTransitionTime: h.LastTransitionTime}
		if h.HealthConditions != nil {
			out.HealthStatus.HealthConditions = make([]internalHealthCondition, 0, len(h.HealthConditions))
		}
		for _, c := range h.HealthConditions {
			out.HealthStatus.HealthConditions = append(out.HealthStatus.HealthConditions,
				internalHealthCondition{Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	return out
}
