package nodesim

import (
	"context"
	"encoding/json"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/internal/controllers/watchcache"
)

// podsListed replaces the pods known by the ones storage listed.
func (s *Simulator) podsListed(pods []*corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.pods
	s.pods = map[string]*corev1.Pod{}
	for _, p := range pods {
		s.podStored(p)
	}
	for key := range old {
		if s.pods[key] == nil {
			s.podGone(key)
		}
	}
}

// podHandlers follow the pods of the shared cache: every pod is
// recorded, and queued for the scheduler or its kubelet.
func (s *Simulator) podHandlers() watchcache.Handlers[*corev1.Pod] {
	written := func(pod *corev1.Pod) {
		s.mu.Lock()
		s.podStored(pod)
		s.mu.Unlock()
	}
	return watchcache.Handlers[*corev1.Pod]{Add: written, Update: func(_, cur *corev1.Pod) { written(cur) }, Remove: func(p *corev1.Pod) { s.podDeleted(p.Namespace + "/" + p.Name) }}
}

// podDeleted forgets the pod at key, which storage deleted; the pods no
// node fit are tried again if it was bound.
func (s *Simulator) podDeleted(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pods[key]; p != nil {
		delete(s.pods, key)
		s.podGone(key)
		if p.Spec.NodeName != "" {
			s.requeueUnschedulableLocked()
		}
	}
}

// podGone forgets a deleted pod (s.mu held).
func (s *Simulator) podGone(key string) {
	delete(s.assumed, key)
	delete(s.unschedulable, key)
	s.podIPs.forget(key)
	s.recount(key)
}

// podStored records the pod as storage now holds it and queues it: for
// the scheduler while unbound, for its kubelet once bound to a simulated
// node (s.mu held).
func (s *Simulator) podStored(pod *corev1.Pod) {
	key := pod.Namespace + "/" + pod.Name
	old := s.pods[key]
	s.pods[key] = pod
	if old != nil && old.UID != pod.UID {
		s.podGone(key)
	}
	if pod.Status.PodIP != "" && pod.Spec.NodeName != "" {
		s.podIPs.set(key, pod.Spec.NodeName, pod.Status.PodIP)
	}
	defer s.recount(key)
	if pod.Spec.NodeName == "" {
		// A pod no node fit waits for a change of the cluster or of
		// its own spec, not for the scheduler's own status write.
		if !s.unschedulable[key] || old == nil || old.Generation != pod.Generation {
			s.schedQueue.Add(key)
		}
		return
	}
	delete(s.assumed, key)
	delete(s.unschedulable, key)
	if s.nodes[pod.Spec.NodeName] != nil {
		s.podQueue.Add(key)
	}
	if old != nil && old.Spec.NodeName != "" && !terminal(old) && terminal(pod) {
		s.requeueUnschedulableLocked() // its resources are free
	}
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// syncPod is a kubelet's work on a pod bound to its node: run it, complete
// it when its run time is up, delete it once its grace period has passed.
func (s *Simulator) syncPod(ctx context.Context, key string) error {
	s.mu.Lock()
	pod, sn := s.pods[key], (*simNode)(nil)
	if pod != nil {
		sn = s.nodes[pod.Spec.NodeName]
	}
	var hostIP string
	var node *corev1.Node
	if sn != nil {
		pod, node = pod.DeepCopy(), sn.node
		hostIP = internalIP(node, sn.index)
	}
	s.mu.Unlock()
	if sn == nil {
		return nil
	}
	switch {
	case pod.DeletionTimestamp != nil:
		return s.deleteWhenGraceEnds(ctx, sn, pod, key)
	case terminal(pod):
		return nil
	case !running(pod):
		podIP := hostIP
		if !pod.Spec.HostNetwork {
			podIP = s.podIP(key, pod, node, sn.index)
		}
		if err := s.patchStatus(ctx, sn, pod, runningStatus(pod, hostIP, podIP, metav1.Now())); err != nil {
			return err
		}
		s.startedEvents(ctx, sn, node.Name, pod)
		return nil
	}
	runTime, ok := podRunTime(pod)
	if !ok || pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || pod.Status.StartTime == nil {
		return nil
	}
	if left := time.Until(pod.Status.StartTime.Add(runTime)); left > 0 {
		s.podQueue.AddAfter(key, left)
		return nil
	}
	return s.patchStatus(ctx, sn, pod, finishedStatus(pod, corev1.PodSucceeded, metav1.Now()))
}

// running reports whether the pod's status already shows it running, as
// this kubelet writes it.
func running(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && len(pod.Status.ContainerStatuses) == len(pod.Spec.Containers)
}

// podRunTime is how long the pod runs before its containers exit 0: its
// pod-complete annotation, or DefaultJobPodRunTime for a Job's pod.
func podRunTime(pod *corev1.Pod) (time.Duration, bool) {
	if v, ok := pod.Annotations[AnnotationPodComplete]; ok {
		d, err := time.ParseDuration(v)
		return d, err == nil
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "Job" {
		return DefaultJobPodRunTime, true
	}
	return 0, false
}

// deleteWhenGraceEnds finishes the deletion of a pod when its
// deletionTimestamp (the deletion's grace period, which the server
// defaults to terminationGracePeriodSeconds) has come: a simulated
// container ignores SIGTERM, so a running pod's containers are killed then
// and its status written Failed, as the kubelet writes a stopped pod's
// terminal phase; then the pod is deleted for good (grace period 0,
// conditional on its uid).
func (s *Simulator) deleteWhenGraceEnds(ctx context.Context, sn *simNode, pod *corev1.Pod, key string) error {
	if left := time.Until(pod.DeletionTimestamp.Time); left > 0 {
		s.podQueue.AddAfter(key, left)
		return nil
	}
	if running(pod) {
		if err := s.patchStatus(ctx, sn, pod, finishedStatus(pod, corev1.PodFailed, metav1.Now())); err != nil {
			return err
		}
	}
	err := sn.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptrTo(int64(0)), Preconditions: &metav1.Preconditions{UID: &pod.UID}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// patchStatus writes status as the pod's kubelet: a merge patch of the
// whole status, guarded by the pod's uid.
func (s *Simulator) patchStatus(ctx context.Context, sn *simNode, pod *corev1.Pod, status corev1.PodStatus) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": pod.UID}, "status": status})
	if err != nil {
		return err
	}
	_, err = sn.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// internalIP is the node's InternalIP, or the one its index gives.
func internalIP(node *corev1.Node, index int) string {
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return nodeIP(index)
}

// podIP is the pod's IP on its node: the one it has, or the lowest free
// one of the node's pod CIDR from .2 on.
func (s *Simulator) podIP(key string, pod *corev1.Pod, node *corev1.Node, index int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ip := s.podIPs.of(key); ip != "" {
		return ip
	}
	cidr := node.Spec.PodCIDR
	if cidr == "" {
		cidr = podCIDR(index)
	}
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil || !prefix.Addr().Is4() {
		prefix = netip.MustParsePrefix(podCIDR(index))
	}
	ip := prefix.Masked().Addr().Next().Next()
	for s.podIPs.taken(pod.Spec.NodeName, ip.String()) && prefix.Contains(ip.Next()) {
		ip = ip.Next()
	}
	if p := s.pods[key]; p != nil && p.UID == pod.UID { // not deleted meanwhile
		s.podIPs.set(key, pod.Spec.NodeName, ip.String())
	}
	return ip.String()
}

// requeueUnschedulable queues the pods no node fit again: a node changed
// or a bound pod went.
func (s *Simulator) requeueUnschedulable() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requeueUnschedulableLocked()
}

func (s *Simulator) requeueUnschedulableLocked() {
	for key := range s.unschedulable {
		s.schedQueue.Add(key)
	}
}
