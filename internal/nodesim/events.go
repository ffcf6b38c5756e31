package nodesim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// startedEvents records, as the node's kubelet, the events a kubelet
// records for each container it starts (init containers first): Pulled
// (the image already present, as kubelet 1.37 words it with
// KubeletEnsureSecretPulledImages on), Created and Started. A failure is
// logged only.
func (s *Simulator) startedEvents(ctx context.Context, sn *simNode, node string, pod *corev1.Pod) {
	type container struct {
		c         *corev1.Container
		fieldPath string
	}
	var cs []container
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cs = append(cs, container{c, fmt.Sprintf("spec.initContainers{%s}", c.Name)})
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs = append(cs, container{c, fmt.Sprintf("spec.containers{%s}", c.Name)})
	}
	for _, c := range cs {
		for _, e := range [][2]string{
			{"Pulled", fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", c.c.Image)},
			{"Created", "Container created"},
			{"Started", "Container started"},
		} {
			if err := s.kubeletEvent(ctx, sn, node, pod, c.fieldPath, e[0], e[1]); err != nil && ctx.Err() == nil {
				s.log.Debug("recording a kubelet event", "pod", pod.Namespace+"/"+pod.Name, "reason", e[0], "err", err)
				return
			}
		}
	}
}

// kubeletEvent creates one core/v1 Event about a container of pod, as the
// kubelet's recorder does (source kubelet on the node).
func (s *Simulator) kubeletEvent(ctx context.Context, sn *simNode, node string, pod *corev1.Pod, fieldPath, reason, msg string) error {
	now := time.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod.Name, now.UnixNano()), Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			APIVersion: "v1", ResourceVersion: pod.ResourceVersion, FieldPath: fieldPath},
		Reason: reason, Message: msg, Type: corev1.EventTypeNormal, Count: 1,
		Source:         corev1.EventSource{Component: "kubelet", Host: node},
		FirstTimestamp: metav1.NewTime(now), LastTimestamp: metav1.NewTime(now),
		ReportingController: "kubelet", ReportingInstance: node,
	}
	_, err := sn.client.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	return err
}
