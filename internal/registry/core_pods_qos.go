package registry

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/pkg/apis/core/qos"
)

// The feature gates pod preparation and validation read.
const (
	gatePodLevelResources                = "PodLevelResources"
	gatePodLevelResourcesFixDefaulting   = "PodLevelResourcesFixDefaulting"
	gateInPlacePodLevelResourcesResize   = "InPlacePodLevelResourcesVerticalScaling"
	gateInPlaceResizeInitContainers      = "InPlacePodVerticalScalingInitContainers"
	gateInPlaceResizeMemoryBackedVolumes = "InPlacePodVerticalScalingMemoryBackedVolumes"
	gateEmptyDirVolumeMode               = "EmptyDirVolumeMode"
)

// computePodQOS is the pod's class with every gate at its default.
func computePodQOS(pod *corev1.Pod) corev1.PodQOSClass { return qos.Compute(pod, defaultGates{}) }
