package nodesim

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The pod condition reasons the kubelet writes (pkg/kubelet/status).
const (
	reasonPodCompleted = "PodCompleted"
	reasonCompleted    = "Completed"
)

// kubeletConditions are the pod conditions the kubelet owns
// (pkg/kubelet/types.PodConditionByKubelet), in the order it writes them,
// after the conditions others own.
var kubeletConditions = []corev1.PodConditionType{
	corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled,
}

// runningStatus is the status a kubelet reports for pod once its sandbox
// and containers run: init containers completed, every container running,
// started and ready (a simulated container passes its probes at once).
func runningStatus(pod *corev1.Pod, hostIP, podIP string, now metav1.Time) corev1.PodStatus {
	start := now
	if pod.Status.StartTime != nil {
		start = *pod.Status.StartTime
	}
	s := corev1.PodStatus{
		Phase: corev1.PodRunning, HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}},
		PodIP: podIP, PodIPs: []corev1.PodIP{{IP: podIP}}, StartTime: &start,
		QOSClass: pod.Status.QOSClass, ObservedGeneration: pod.Generation,
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			s.InitContainerStatuses = append(s.InitContainerStatuses, runningContainer(pod, c, start, true))
			continue
		}
		s.InitContainerStatuses = append(s.InitContainerStatuses, completedContainer(pod, c, start, now))
	}
	for i := range pod.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, runningContainer(pod, &pod.Spec.Containers[i], start, readinessGatesMet(pod)))
	}
	s.Conditions = podConditions(pod, corev1.PodRunning, now)
	return s
}

// finishedStatus is the status of pod once all its containers have
// exited: phase Succeeded with each terminated as Completed (exit 0), or
// Failed with each killed at the end of its grace period (exit 137, the
// runtime's reason Error); and the kubelet's conditions for a finished pod.
func finishedStatus(pod *corev1.Pod, phase corev1.PodPhase, now metav1.Time) corev1.PodStatus {
	s := *pod.Status.DeepCopy()
	s.Phase = phase
	s.ObservedGeneration = pod.Generation
	start := now
	if s.StartTime != nil {
		start = *s.StartTime
	}
	exit := corev1.ContainerStateTerminated{ExitCode: 0, Reason: reasonCompleted}
	if phase == corev1.PodFailed {
		exit = corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}
	}
	for i := range s.ContainerStatuses {
		terminate(&s.ContainerStatuses[i], exit, start, now)
	}
	for i := range s.InitContainerStatuses {
		if s.InitContainerStatuses[i].State.Running != nil {
			terminate(&s.InitContainerStatuses[i], exit, start, now)
		}
	}
	s.Conditions = podConditions(pod, phase, now)
	return s
}

func terminate(cs *corev1.ContainerStatus, exit corev1.ContainerStateTerminated, start, now metav1.Time) {
	if cs.State.Running != nil {
		start = cs.State.Running.StartedAt
	}
	exit.StartedAt, exit.FinishedAt, exit.ContainerID = start, now, cs.ContainerID
	cs.State = corev1.ContainerState{Terminated: &exit}
	cs.Ready, cs.Started = false, ptrTo(false)
}

// readinessGatesMet reports whether every readiness gate of the pod has its
// condition True (the kubelet's Ready condition waits for them).
func readinessGatesMet(pod *corev1.Pod) bool {
	for _, g := range pod.Spec.ReadinessGates {
		i := slices.IndexFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == g.ConditionType })
		if i < 0 || pod.Status.Conditions[i].Status != corev1.ConditionTrue {
			return false
		}
	}
	return true
}

// podConditions are pod's conditions owned by others, then the kubelet's
// for a pod in phase: PodReadyToStartContainers, Initialized, Ready,
// ContainersReady and PodScheduled. A condition keeps its
// lastTransitionTime while its status stays.
func podConditions(pod *corev1.Pod, phase corev1.PodPhase, now metav1.Time) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		if !slices.Contains(kubeletConditions, c.Type) {
			out = append(out, c)
		}
	}
	sandbox := corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue}
	initialized := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	containersReady := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}
	finished := phase == corev1.PodSucceeded || phase == corev1.PodFailed
	if finished {
		containersReady.Status, containersReady.Reason = corev1.ConditionFalse, reasonPodCompleted
		if phase == corev1.PodFailed {
			containersReady.Reason = "PodFailed"
		}
	}
	podReady := containersReady
	podReady.Type = corev1.PodReady
	if finished {
		// The sandbox of a finished pod is stopped.
		sandbox.Status, sandbox.Reason, sandbox.Message = corev1.ConditionFalse, "PodSandboxNotReady", "pod sandbox is not ready"
		if phase == corev1.PodSucceeded {
			initialized.Reason = reasonPodCompleted
		}
	} else if !readinessGatesMet(pod) {
		podReady.Status, podReady.Reason, podReady.Message = corev1.ConditionFalse, "ReadinessGatesNotReady", readinessGatesMessage(pod)
	}
	for _, c := range []corev1.PodCondition{
		sandbox, initialized, podReady, containersReady,
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
	} {
		c.ObservedGeneration = pod.Generation
		c.LastTransitionTime = now
		if old := findCondition(pod.Status.Conditions, c.Type); old != nil && old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		out = append(out, c)
	}
	return out
}

func readinessGatesMessage(pod *corev1.Pod) string {
	var msgs []string
	for _, g := range pod.Spec.ReadinessGates {
		c := findCondition(pod.Status.Conditions, g.ConditionType)
		if c == nil {
			msgs = append(msgs, `corresponding condition of pod readiness gate "`+string(g.ConditionType)+`" does not exist.`)
		} else if c.Status != corev1.ConditionTrue {
			msgs = append(msgs, `the status of pod readiness gate "`+string(g.ConditionType)+`" is not "True", but `+string(c.Status))
		}
	}
	return strings.Join(msgs, ", ")
}

func findCondition(conds []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// runningContainer is a container's status while it runs, as the kubelet
// converts the runtime's: image as the runtime resolved it, its digest,
// a containerd ID, the volume mounts, resources and the user it runs as.
func runningContainer(pod *corev1.Pod, c *corev1.Container, start metav1.Time, ready bool) corev1.ContainerStatus {
	cs := baseContainer(pod, c)
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}
	cs.Ready, cs.Started = ready, ptrTo(true)
	return cs
}

// completedContainer is an init container that ran and exited 0.
func completedContainer(pod *corev1.Pod, c *corev1.Container, start, now metav1.Time) corev1.ContainerStatus {
	cs := baseContainer(pod, c)
	cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: reasonCompleted, StartedAt: start, FinishedAt: now, ContainerID: cs.ContainerID}}
	cs.Started = ptrTo(false)
	return cs
}

func baseContainer(pod *corev1.Pod, c *corev1.Container) corev1.ContainerStatus {
	image := NormalizeImage(c.Image)
	cs := corev1.ContainerStatus{
		Name: c.Name, Image: image, ImageID: imageID(image), ContainerID: containerID(pod, c.Name),
		RestartCount: 0, Resources: c.Resources.DeepCopy(), AllocatedResources: c.Resources.Requests.DeepCopy(),
		User: containerUser(pod, c),
	}
	for _, m := range c.VolumeMounts {
		vs := corev1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			mode := corev1.RecursiveReadOnlyDisabled
			if m.RecursiveReadOnly != nil && *m.RecursiveReadOnly == corev1.RecursiveReadOnlyEnabled {
				mode = corev1.RecursiveReadOnlyEnabled
			}
			vs.RecursiveReadOnly = &mode
		}
		cs.VolumeMounts = append(cs.VolumeMounts, vs)
	}
	return cs
}

// containerUser is the identity the runtime reports for the container's
// process: runAsUser and runAsGroup (container over pod, root by default),
// with the group, fsGroup and supplementalGroups as its groups.
func containerUser(pod *corev1.Pod, c *corev1.Container) *corev1.ContainerUser {
	var uid, gid int64
	psc, csc := pod.Spec.SecurityContext, c.SecurityContext
	if psc != nil && psc.RunAsUser != nil {
		uid = *psc.RunAsUser
	}
	if psc != nil && psc.RunAsGroup != nil {
		gid = *psc.RunAsGroup
	}
	if csc != nil && csc.RunAsUser != nil {
		uid = *csc.RunAsUser
	}
	if csc != nil && csc.RunAsGroup != nil {
		gid = *csc.RunAsGroup
	}
	groups := []int64{gid}
	if psc != nil {
		if psc.FSGroup != nil {
			groups = append(groups, *psc.FSGroup)
		}
		groups = append(groups, psc.SupplementalGroups...)
	}
	slices.Sort(groups)
	return &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: uid, GID: gid, SupplementalGroups: slices.Compact(groups)}}
}

// NormalizeImage is an image reference as containerd reports it: a
// registry (docker.io by default), library/ for docker.io's official
// images, and :latest when it has neither tag nor digest.
func NormalizeImage(ref string) string {
	name, rest := ref, ""
	if i := strings.IndexAny(ref, "@"); i >= 0 {
		name, rest = ref[:i], ref[i:]
	}
	slash := strings.Index(name, "/")
	if slash < 0 || !strings.ContainsAny(name[:slash], ".:") && name[:slash] != "localhost" {
		name = "docker.io/" + name
	}
	if strings.HasPrefix(name, "docker.io/") && strings.Count(name, "/") == 1 {
		name = "docker.io/library/" + strings.TrimPrefix(name, "docker.io/")
	}
	lastSlash := strings.LastIndex(name, "/")
	if rest == "" && !strings.Contains(name[lastSlash:], ":") {
		name += ":latest"
	}
	return name + rest
}

// imageID is the image's digest reference (repository@sha256:...), the
// digest made up from the reference since no image is pulled.
func imageID(image string) string {
	repo := image
	if i := strings.Index(repo, "@"); i >= 0 {
		return image
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo + "@sha256:" + digest(image)
}

// containerID is a containerd container ID, derived from the pod's uid
// and the container's name so that status writes repeat it.
func containerID(pod *corev1.Pod, name string) string {
	return "containerd://" + digest(string(pod.UID)+"/"+name)
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func ptrTo[T any](v T) *T { return &v }
