package podresize

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// generator makes stored pods and the pods a resize sends for them.
type generator struct {
	rng        *rand.Rand
	t          testing.TB
	noPodLevel bool
}

func (g *generator) pick(xs ...string) string { return xs[g.rng.Intn(len(xs))] }
func (g *generator) chance(p float64) bool    { return g.rng.Float64() < p }

var (
	cpus     = []string{"50m", "100m", "200m", "250m", "500m", "1", "1500m", "2"}
	memories = []string{"32Mi", "64Mi", "128Mi", "256Mi", "1Gi", "2G"}
	others   = []corev1.ResourceName{corev1.ResourceEphemeralStorage, "example.com/gpu", "hugepages-2Mi"}
)

// quantity is a random quantity of a resource.
func (g *generator) quantity(name corev1.ResourceName) resource.Quantity {
	switch name {
	case corev1.ResourceCPU:
		return resource.MustParse(g.pick(cpus...))
	case corev1.ResourceMemory:
		return resource.MustParse(g.pick(memories...))
	case "hugepages-2Mi":
		return resource.MustParse(g.pick("2Mi", "4Mi", "8Mi"))
	case "example.com/gpu":
		return resource.MustParse(g.pick("1", "2"))
	}
	return resource.MustParse(g.pick("100Mi", "1Gi"))
}

// requirements are random requests and limits: cpu and memory often,
// other resources sometimes; limits usually equal or above requests.
func (g *generator) requirements() corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{}
	add := func(name corev1.ResourceName) {
		req := g.quantity(name)
		switch g.rng.Intn(4) {
		case 0: // request only
			setQ(&r.Requests, name, req)
		case 1: // limit only (defaulting copies it to the request)
			setQ(&r.Limits, name, req)
		case 2: // equal
			setQ(&r.Requests, name, req)
			setQ(&r.Limits, name, req)
		default:
			setQ(&r.Requests, name, req)
			lim := req.DeepCopy()
			lim.Add(req)
			setQ(&r.Limits, name, lim)
		}
		if name == "example.com/gpu" || strings.HasPrefix(string(name), "hugepages-") {
			setQ(&r.Requests, name, req)
			setQ(&r.Limits, name, req)
		}
	}
	if g.chance(0.8) {
		add(corev1.ResourceCPU)
	}
	if g.chance(0.7) {
		add(corev1.ResourceMemory)
	}
	if g.chance(0.2) {
		add(others[g.rng.Intn(len(others))])
	}
	if g.chance(0.3) { // guaranteed shape
		r = corev1.ResourceRequirements{}
		cpu, mem := g.quantity(corev1.ResourceCPU), g.quantity(corev1.ResourceMemory)
		r.Requests = corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
		r.Limits = corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
	}
	return r
}

func setQ(list *corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	if *list == nil {
		*list = corev1.ResourceList{}
	}
	(*list)[name] = q
}

func (g *generator) resizePolicy() []corev1.ContainerResizePolicy {
	if !g.chance(0.3) {
		return nil
	}
	policies := []corev1.ResourceResizeRestartPolicy{corev1.NotRequired, corev1.RestartContainer}
	out := []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: policies[g.rng.Intn(2)]}}
	if g.chance(0.5) {
		out = append(out, corev1.ContainerResizePolicy{ResourceName: corev1.ResourceMemory, RestartPolicy: policies[g.rng.Intn(2)]})
	}
	return out
}

func (g *generator) container(name string) corev1.Container {
	return corev1.Container{Name: name, Image: "registry.k8s.io/pause:3.10", Resources: g.requirements(), ResizePolicy: g.resizePolicy()}
}

// storedPod is a pod as kube-apiserver stores it: defaulted, with its QoS
// class and, when bound, container statuses.
func (g *generator) storedPod() *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: types.UID("uid-1"), Generation: int64(1 + g.rng.Intn(3)),
			ResourceVersion: "7", Labels: map[string]string{"app": "web"}},
	}
	for i := range 1 + g.rng.Intn(3) {
		p.Spec.Containers = append(p.Spec.Containers, g.container(fmt.Sprintf("c%d", i)))
	}
	for i := range g.rng.Intn(3) {
		c := g.container(fmt.Sprintf("init%d", i))
		if g.chance(0.5) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		} else if g.chance(0.8) {
			c.ResizePolicy = nil // plain init containers rarely carry one
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	if !g.noPodLevel && g.chance(0.3) {
		p.Spec.Resources = g.podLevel()
	}
	if g.chance(0.4) {
		p.Spec.Volumes = g.volumes()
	}
	switch {
	case g.chance(0.04):
		p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
	case g.chance(0.04):
		p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
	}
	if g.chance(0.7) {
		p.Spec.NodeName = "node-1"
	}
	defaulted(p)
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: computeQOS(g.t, p)}
	switch {
	case g.chance(0.05):
		p.Status.QOSClass = ""
	case g.chance(0.05):
		p.Status.QOSClass = corev1.PodQOSGuaranteed
	}
	if p.Spec.NodeName != "" && g.chance(0.8) {
		for _, c := range p.Spec.Containers {
			s := corev1.ContainerStatus{Name: c.Name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
			if !g.chance(0.1) {
				s.Resources = c.Resources.DeepCopy()
			}
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, s)
		}
	}
	return p
}

func (g *generator) podLevel() *corev1.ResourceRequirements {
	r := &corev1.ResourceRequirements{}
	if g.chance(0.8) {
		setQ(&r.Requests, corev1.ResourceCPU, resource.MustParse(g.pick("2", "4")))
	}
	if g.chance(0.6) {
		setQ(&r.Requests, corev1.ResourceMemory, resource.MustParse(g.pick("4Gi", "8Gi")))
	}
	if g.chance(0.4) {
		setQ(&r.Limits, corev1.ResourceCPU, resource.MustParse(g.pick("4", "8")))
	}
	if g.chance(0.3) {
		setQ(&r.Limits, corev1.ResourceMemory, resource.MustParse(g.pick("8Gi", "16Gi")))
	}
	return r
}

func (g *generator) volumes() []corev1.Volume {
	var out []corev1.Volume
	for i := range 1 + g.rng.Intn(2) {
		ed := &corev1.EmptyDirVolumeSource{}
		if g.chance(0.6) {
			ed.Medium = corev1.StorageMediumMemory
		}
		if g.chance(0.7) {
			ed.SizeLimit = ptr.To(resource.MustParse(g.pick("64Mi", "128Mi")))
		}
		out = append(out, corev1.Volume{Name: fmt.Sprintf("v%d", i), VolumeSource: corev1.VolumeSource{EmptyDir: ed}})
	}
	return out
}

// pair returns a stored pod, the pod a resize sends for it, and what
// was changed.
func (g *generator) pair() (old, sent *corev1.Pod, what string) {
	old = g.storedPod()
	sent = old.DeepCopy()
	var changes []string
	for range 1 + g.rng.Intn(3) {
		changes = append(changes, g.mutate(sent))
	}
	defaulted(sent)
	return old, sent, strings.Join(changes, ", ")
}

// mutate makes one change a client might send through pods/resize.
func (g *generator) mutate(p *corev1.Pod) string {
	c := g.someContainer(p)
	switch n := g.rng.Intn(30); {
	case n >= 24:
		return g.resizeKeepingShape(c)
	case n < 6:
		name := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}[g.rng.Intn(2)]
		q := g.quantity(name)
		if g.chance(0.5) {
			setQ(&c.Resources.Requests, name, q)
			return "request " + string(name)
		}
		setQ(&c.Resources.Limits, name, q)
		return "limit " + string(name)
	case n < 8:
		c.Resources = g.requirements()
		return "new requirements"
	case n == 8:
		name := others[g.rng.Intn(len(others))]
		q := g.quantity(name)
		setQ(&c.Resources.Requests, name, q)
		setQ(&c.Resources.Limits, name, q)
		return "other resource " + string(name)
	case n == 9:
		if g.chance(0.5) {
			g.removeOne(c.Resources.Requests)
			return "remove a request"
		}
		g.removeOne(c.Resources.Limits)
		return "remove a limit"
	case n == 10:
		c.ResizePolicy = g.resizePolicy()
		return "resize policy"
	case n == 11:
		return g.changeContainers(p)
	case n == 12:
		c.Image = "registry.k8s.io/pause:3.9"
		c.Env = append(c.Env, corev1.EnvVar{Name: "X", Value: "1"})
		return "image and env"
	case n == 13:
		p.Labels = map[string]string{"app": "other"}
		p.Annotations = map[string]string{"note": "x"}
		p.Finalizers = []string{"example.com/f"}
		return "metadata"
	case n == 14:
		p.Spec.ActiveDeadlineSeconds = ptr.To(int64(30))
		p.Spec.NodeName = "node-2"
		p.Spec.Hostname = "h"
		return "other spec fields"
	case n == 15:
		p.Status.Phase = corev1.PodFailed
		p.Status.QOSClass = corev1.PodQOSBestEffort
		return "status"
	case n < 19:
		return g.changePodLevel(p)
	case n < 21:
		return g.changeVolumes(p)
	case n == 21:
		cpu := g.quantity(corev1.ResourceCPU)
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: cpu}
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
		return "request above limit"
	case n == 22:
		cpu, mem := g.quantity(corev1.ResourceCPU), g.quantity(corev1.ResourceMemory)
		for i := range p.Spec.Containers {
			p.Spec.Containers[i].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}}
		}
		return "all guaranteed"
	default:
		for i := range p.Spec.Containers {
			p.Spec.Containers[i].Resources = corev1.ResourceRequirements{}
		}
		return "all best effort"
	}
}

// resizeKeepingShape changes the cpu or memory of c the way a well-behaved
// client does: a request alone, equal requests and limits together, or a
// limit kept twice the request.
func (g *generator) resizeKeepingShape(c *corev1.Container) string {
	name := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}[g.rng.Intn(2)]
	q := g.quantity(name)
	req, hasReq := c.Resources.Requests[name]
	limit, hasLimit := c.Resources.Limits[name]
	switch {
	case hasReq && hasLimit && req.Cmp(limit) == 0:
		setQ(&c.Resources.Requests, name, q)
		setQ(&c.Resources.Limits, name, q)
	case hasLimit:
		setQ(&c.Resources.Requests, name, q)
		double := q.DeepCopy()
		double.Add(q)
		setQ(&c.Resources.Limits, name, double)
	default:
		setQ(&c.Resources.Requests, name, q)
	}
	return "resize " + string(name)
}

// removeOne deletes a random resource of list (the same one for a seed).
func (g *generator) removeOne(list corev1.ResourceList) {
	if len(list) == 0 {
		return
	}
	names := make([]string, 0, len(list))
	for name := range list {
		names = append(names, string(name))
	}
	sort.Strings(names)
	delete(list, corev1.ResourceName(names[g.rng.Intn(len(names))]))
}

// someContainer is a random regular or init container of p.
func (g *generator) someContainer(p *corev1.Pod) *corev1.Container {
	if len(p.Spec.InitContainers) > 0 && g.chance(0.35) {
		return &p.Spec.InitContainers[g.rng.Intn(len(p.Spec.InitContainers))]
	}
	return &p.Spec.Containers[g.rng.Intn(len(p.Spec.Containers))]
}

func (g *generator) changeContainers(p *corev1.Pod) string {
	switch g.rng.Intn(5) {
	case 0:
		p.Spec.Containers = append(p.Spec.Containers, g.container("extra"))
		return "add container"
	case 1:
		if len(p.Spec.Containers) > 1 {
			p.Spec.Containers = p.Spec.Containers[1:]
			return "remove container"
		}
		p.Spec.Containers[0].Name = "renamed"
		return "rename container"
	case 2:
		if n := len(p.Spec.Containers); n > 1 {
			p.Spec.Containers[0], p.Spec.Containers[n-1] = p.Spec.Containers[n-1], p.Spec.Containers[0]
			return "reorder containers"
		}
		p.Spec.Containers[0].Name = "renamed"
		return "rename container"
	case 3:
		p.Spec.InitContainers = append(p.Spec.InitContainers, g.container("init-extra"))
		return "add init container"
	default:
		if len(p.Spec.InitContainers) > 0 {
			p.Spec.InitContainers[0].Name = "init-renamed"
			return "rename init container"
		}
		p.Spec.InitContainers = nil
		return "no init containers"
	}
}

func (g *generator) changePodLevel(p *corev1.Pod) string {
	switch g.rng.Intn(5) {
	case 0:
		p.Spec.Resources = nil
		return "drop pod-level resources"
	case 1:
		p.Spec.Resources = g.podLevel()
		return "new pod-level resources"
	case 2:
		if p.Spec.Resources == nil {
			p.Spec.Resources = &corev1.ResourceRequirements{}
		}
		setQ(&p.Spec.Resources.Requests, corev1.ResourceCPU, resource.MustParse(g.pick("3", "6")))
		return "pod-level cpu"
	case 3:
		if p.Spec.Resources == nil {
			p.Spec.Resources = &corev1.ResourceRequirements{}
		}
		setQ(&p.Spec.Resources.Limits, "hugepages-2Mi", resource.MustParse("8Mi"))
		return "pod-level hugepages"
	default:
		if p.Spec.Resources != nil {
			delete(p.Spec.Resources.Requests, corev1.ResourceMemory)
		}
		return "pod-level memory request removed"
	}
}

func (g *generator) changeVolumes(p *corev1.Pod) string {
	if len(p.Spec.Volumes) == 0 || g.chance(0.2) {
		p.Spec.Volumes = append(p.Spec.Volumes, g.volumes()...)
		return "add volumes"
	}
	v := &p.Spec.Volumes[g.rng.Intn(len(p.Spec.Volumes))]
	switch g.rng.Intn(5) {
	case 0:
		v.EmptyDir.SizeLimit = ptr.To(resource.MustParse(g.pick("96Mi", "256Mi")))
		return "sizeLimit"
	case 1:
		v.EmptyDir.SizeLimit = nil
		return "sizeLimit removed"
	case 2:
		v.EmptyDir.Medium = ""
		return "medium"
	case 3:
		v.EmptyDir.Mode = ptr.To(int32(0o700))
		return "emptyDir mode"
	default:
		v.Name = "renamed"
		return "volume renamed"
	}
}
