package registry

// Cases after upstream's TestValidatePodResize and
// TestPodResizePrepareForUpdate (pkg/apis/core/validation,
// pkg/registry/core/pod), on v1 pods run through the resize subresource as
// the server runs them: defaulting, PrepareForUpdate, validation.

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/features"
)

// rl is a resource list of cpu, memory and ephemeral-storage ("" leaves
// one out).
func rl(cpu, mem, storage string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem, corev1.ResourceEphemeralStorage: storage} {
		if v != "" {
			out[name] = resource.MustParse(v)
		}
	}
	return out
}

// resizePod is a stored pod with one container "c" of the given requests
// and limits, its QoS class recorded as on create.
func resizePod(req, lim corev1.ResourceList, tweaks ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: meta1("p"), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img",
		Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}}}}
	p.Generation = 1
	for _, tw := range tweaks {
		tw(p)
	}
	pods, _ := testCatalogue.Lookup(corev1.SchemeGroupVersion.WithResource("pods"))
	pods.Default(p)
	p.Status.QOSClass = computePodQOS(p)
	return p
}

// resize runs sent through pods/resize against old and returns the pod to
// store and the errors.
func resize(t *testing.T, sent, old *corev1.Pod) (*corev1.Pod, field.ErrorList) {
	t.Helper()
	r := resourceFor(t, old)
	obj := sent.DeepCopy()
	r.Default(obj)
	obj.Generation = old.Generation
	out := PrepareForUpdate(r, "resize", obj, old).(*corev1.Pod)
	return out, r.ValidateSubresourceChange("resize", out, old)
}

func withPolicy(name corev1.ResourceName, p corev1.ResourceResizeRestartPolicy) func(*corev1.Pod) {
	return func(pod *corev1.Pod) {
		pod.Spec.Containers[0].ResizePolicy = append(pod.Spec.Containers[0].ResizePolicy, corev1.ContainerResizePolicy{ResourceName: name, RestartPolicy: p})
	}
}

func withInit(req corev1.ResourceList, sidecar bool, policy corev1.ResourceResizeRestartPolicy) func(*corev1.Pod) {
	return func(pod *corev1.Pod) {
		c := corev1.Container{Name: "init", Image: "img", Resources: corev1.ResourceRequirements{Requests: req}}
		if sidecar {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		if policy != "" {
			c.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: policy}}
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
}

func withPodResources(req, lim corev1.ResourceList) func(*corev1.Pod) {
	return func(pod *corev1.Pod) { pod.Spec.Resources = &corev1.ResourceRequirements{Requests: req, Limits: lim} }
}

var (
	windows = func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Windows} }
	static  = func(p *corev1.Pod) { p.Annotations = map[string]string{mirrorPodAnnotation: "x"} }
	none    corev1.ResourceList // nil: defaulting may fill a fresh list
)

func TestValidatePodResize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new *corev1.Pod
		want     string // a part of the aggregate error; "" for none
	}{
		{"cpu limit change", resizePod(none, rl("100m", "", "1Gi")), resizePod(none, rl("200m", "", "1Gi")), ""},
		{"memory limit increase", resizePod(none, rl("100m", "100Mi", "")), resizePod(none, rl("100m", "200Mi", "")), ""},
		{"RestartContainer: memory limit decrease", resizePod(none, rl("100m", "200Mi", ""), withPolicy("memory", corev1.RestartContainer)),
			resizePod(none, rl("100m", "100Mi", ""), withPolicy("memory", corev1.RestartContainer)), ""},
		{"storage limit change", resizePod(none, rl("100m", "100Mi", "2Gi")), resizePod(none, rl("100m", "100Mi", "1Gi")),
			"spec: Forbidden: only cpu and memory resources are mutable"},
		{"cpu request change", resizePod(rl("200m", "", ""), none), resizePod(rl("100m", "", ""), none), ""},
		{"storage request change", resizePod(rl("100m", "", "1Gi"), none), resizePod(rl("100m", "", "2Gi"), none),
			"spec: Forbidden: only cpu and memory resources are mutable"},
		{"guaranteed -> guaranteed", resizePod(rl("100m", "100Mi", ""), rl("100m", "100Mi", "")), resizePod(rl("200m", "400Mi", ""), rl("200m", "400Mi", "")), ""},
		{"burstable -> burstable, add limits", resizePod(rl("100m", "100Mi", ""), none), resizePod(rl("100m", "100Mi", ""), rl("200m", "", "")), ""},
		{"guaranteed -> burstable", resizePod(rl("100m", "100Mi", ""), rl("100m", "100Mi", "")), resizePod(rl("100m", "100Mi", ""), rl("200m", "200Mi", "")),
			`spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing`},
		{"burstable -> guaranteed", resizePod(rl("100m", "100Mi", ""), none), resizePod(rl("100m", "100Mi", ""), rl("100m", "100Mi", "")),
			`spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing`},
		{"besteffort -> burstable", resizePod(none, none), resizePod(rl("100m", "100Mi", ""), rl("200m", "200Mi", "")),
			"Pod QOS Class may not change as a result of resizing"},
		{"windows pod", resizePod(none, rl("100m", "", ""), windows), resizePod(none, rl("200m", "", ""), windows),
			"Forbidden: windows pods cannot be resized"},
		{"static pod", resizePod(none, rl("100m", "", ""), static), resizePod(none, rl("200m", "", ""), static),
			"Forbidden: static pods cannot be resized"},
		{"remove cpu limit", resizePod(rl("100m", "100Mi", ""), rl("200m", "200Mi", "")), resizePod(rl("100m", "100Mi", ""), rl("", "200Mi", "")),
			"spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed"},
		{"remove memory request", resizePod(rl("100m", "100Mi", ""), none), resizePod(rl("100m", "", ""), none),
			"spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed"},
		{"remove memory request, defaulted from the limit", resizePod(rl("100m", "100Mi", ""), rl("200m", "200Mi", "")),
			resizePod(rl("100m", "", ""), rl("200m", "200Mi", "")), ""},
		{"change resize restart policy", resizePod(rl("100m", "", ""), none, withPolicy("cpu", corev1.NotRequired)),
			resizePod(rl("200m", "", ""), none, withPolicy("cpu", corev1.RestartContainer)),
			"spec: Forbidden: only cpu and memory resources are mutable"},
		{"sidecar cpu request change", resizePod(rl("100m", "", ""), none, withInit(rl("100m", "", ""), true, "")),
			resizePod(rl("100m", "", ""), none, withInit(rl("200m", "", ""), true, "")), ""},
		{"sidecar storage request change", resizePod(rl("100m", "", ""), none, withInit(rl("100m", "", "1Gi"), true, "")),
			resizePod(rl("100m", "", ""), none, withInit(rl("100m", "", "2Gi"), true, "")),
			"spec.initContainers[0]: Forbidden: only cpu and memory resources for init or sidecar containers are mutable"},
		{"non-sidecar init container cpu change", resizePod(rl("100m", "", ""), none, withInit(rl("100m", "", ""), false, "")),
			resizePod(rl("100m", "", ""), none, withInit(rl("200m", "", ""), false, "")), ""},
		{"non-sidecar init container with RestartContainer", resizePod(rl("100m", "", ""), none, withInit(rl("100m", "", ""), false, corev1.NotRequired)),
			resizePod(rl("100m", "", ""), none, withInit(rl("200m", "", ""), false, corev1.RestartContainer)),
			"must not be set to 'RestartContainer' for non-sidecar initContainers"},
		{"pod-level cpu request change", resizePod(rl("100m", "", ""), none, withPodResources(rl("500m", "", ""), none)),
			resizePod(rl("100m", "", ""), none, withPodResources(rl("600m", "", ""), none)), ""},
		{"pod-level below containers", resizePod(rl("100m", "", ""), none, withPodResources(rl("500m", "", ""), none)),
			resizePod(rl("100m", "", ""), none, withPodResources(rl("50m", "", ""), none)),
			`spec.resources.requests[cpu]: Invalid value: "50m": must be greater than or equal to aggregate container requests of 100m`},
		{"pod-level limits removed", resizePod(rl("100m", "100Mi", ""), none, withPodResources(rl("500m", "", ""), rl("1", "", ""))),
			resizePod(rl("100m", "100Mi", ""), none, withPodResources(rl("500m", "", ""), none)),
			"spec.resources.limits: Forbidden: pod-level resource limits cannot be removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := resize(t, tc.new, tc.old)
			got := aggregate(errs)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("resize errors = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPodResizeContainerChanges(t *testing.T) {
	old := resizePod(rl("100m", "", ""), none)
	for _, tc := range []struct {
		name   string
		change func(*corev1.Pod)
		want   string
	}{
		{"added", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "d", Image: "img"})
		},
			"spec.containers: Forbidden: containers may not be added or removed on resize"},
		{"renamed", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "d" },
			"spec.containers[0].name: Forbidden: containers may not be renamed or reordered on resize"},
		{"init added", func(p *corev1.Pod) { p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "img"}} },
			"spec.initContainers: Forbidden: initContainers may not be added or removed on resize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := old.DeepCopy()
			tc.change(sent)
			if _, errs := resize(t, sent, old); !strings.Contains(aggregate(errs), tc.want) {
				t.Errorf("resize errors = %q, want %q", aggregate(errs), tc.want)
			}
		})
	}
}

// TestPodResizeKeepsOnlyResources: a resize changes requests and limits
// and nothing else; generation grows with the spec.
func TestPodResizeKeepsOnlyResources(t *testing.T) {
	old := resizePod(rl("100m", "", ""), none)
	old.Status.Phase = corev1.PodRunning
	sent := old.DeepCopy()
	sent.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
	sent.Spec.Containers[0].Image = "other"
	sent.Spec.ActiveDeadlineSeconds = ptr.To(int64(5))
	sent.Labels = map[string]string{"new": "label"}
	sent.Status.Phase = corev1.PodFailed
	got, errs := resize(t, sent, old)
	if len(errs) > 0 {
		t.Fatalf("resize errors = %v, want none", errs)
	}
	c := got.Spec.Containers[0]
	if q := c.Resources.Requests[corev1.ResourceCPU]; q.String() != "200m" {
		t.Errorf("container = %+v, want the new cpu request", c)
	}
	if c.Image != "img" || got.Spec.ActiveDeadlineSeconds != nil || got.Labels != nil || got.Status.Phase != corev1.PodRunning {
		t.Errorf("resize kept image %q, deadline %v, labels %v, phase %v; want the stored ones", c.Image, got.Spec.ActiveDeadlineSeconds, got.Labels, got.Status.Phase)
	}
	if got.Generation != 2 {
		t.Errorf("generation = %d, want 2", got.Generation)
	}
	same, _ := resize(t, old.DeepCopy(), old)
	if same.Generation != 1 {
		t.Errorf("generation of an unchanged resize = %d, want 1", same.Generation)
	}
}

// TestPodResizeDefaultsPodLevelResources: with PodLevelResourcesFixDefaulting
// a resize completes the pod-level requests and keeps them when the client
// leaves them out.
func TestPodResizeDefaultsPodLevelResources(t *testing.T) {
	old := resizePod(rl("100m", "100Mi", ""), rl("", "200Mi", ""), withPodResources(rl("500m", "", ""), none))
	sent := old.DeepCopy()
	sent.Spec.Resources = &corev1.ResourceRequirements{Requests: rl("600m", "", "")}
	got, errs := resize(t, sent, old)
	if q := got.Spec.Resources.Requests[corev1.ResourceMemory]; q.String() != "100Mi" {
		t.Errorf("pod-level memory request = %v, want the containers' 100Mi (errors %v)", q.String(), errs)
	}
	if q := got.Spec.Resources.Limits[corev1.ResourceMemory]; q.String() != "200Mi" {
		t.Errorf("pod-level memory limit = %v, want the containers' 200Mi", q.String())
	}
	dropped := old.DeepCopy()
	dropped.Spec.Resources = nil
	if got, _ := resize(t, dropped, old); got.Spec.Resources == nil {
		t.Error("a resize without pod-level resources dropped the stored ones")
	}
}

// TestPodResizeGates: the catalogue's gates decide pod-level resizes and
// memory-backed volume resizes.
func TestPodResizeGates(t *testing.T) {
	cat := NewCatalogue()
	r, _ := cat.Lookup(corev1.SchemeGroupVersion.WithResource("pods"))
	old := resizePod(rl("100m", "", ""), none, withPodResources(rl("500m", "", ""), none))
	sent := old.DeepCopy()
	sent.Spec.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("600m")
	run := func() string {
		obj := PrepareForUpdate(r, "resize", sent.DeepCopy(), old)
		return aggregate(r.ValidateSubresourceChange("resize", obj, old))
	}
	if got := run(); got != "" {
		t.Fatalf("pod-level resize with default gates: %q, want no error", got)
	}
	g := features.New()
	if err := g.Set("InPlacePodLevelResourcesVerticalScaling=false"); err != nil {
		t.Fatal(err)
	}
	cat.SetFeatureGates(g)
	if got, want := run(), "resize of pods with pod-level resources is forbidden when InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled"; !strings.Contains(got, want) {
		t.Errorf("pod-level resize with the gate off: %q, want %q", got, want)
	}

	vol := func(size string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
				Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse(size))}}}}
		}
	}
	oldVol, sentVol := resizePod(none, none, vol("64Mi")), resizePod(none, none, vol("128Mi"))
	volumes := func() string {
		obj := PrepareForUpdate(r, "resize", sentVol.DeepCopy(), oldVol)
		return aggregate(r.ValidateSubresourceChange("resize", obj, oldVol))
	}
	if got := volumes(); got != "" {
		t.Errorf("volume resize with the gate off: %q, want the change dropped", got)
	}
	if err := g.Set("InPlacePodVerticalScalingMemoryBackedVolumes=true"); err != nil {
		t.Fatal(err)
	}
	if got := volumes(); got != "" {
		t.Errorf("memory-backed volume resize with the gate on: %q, want no error", got)
	}
	if obj := PrepareForUpdate(r, "resize", sentVol.DeepCopy(), oldVol).(*corev1.Pod); obj.Spec.Volumes[0].EmptyDir.SizeLimit.String() != "128Mi" {
		t.Errorf("sizeLimit = %v, want 128Mi", obj.Spec.Volumes[0].EmptyDir.SizeLimit)
	}
}

// TestPodQOS: the classes upstream's ComputePodQOS gives.
func TestPodQOS(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want corev1.PodQOSClass
	}{
		{"no resources", resizePod(none, none), corev1.PodQOSBestEffort},
		{"requests only", resizePod(rl("100m", "", ""), none), corev1.PodQOSBurstable},
		{"equal cpu and memory", resizePod(rl("1", "1Gi", ""), rl("1", "1Gi", "")), corev1.PodQOSGuaranteed},
		{"cpu only", resizePod(rl("1", "", ""), rl("1", "", "")), corev1.PodQOSBurstable},
		{"storage only", resizePod(rl("", "", "1Gi"), none), corev1.PodQOSBestEffort},
		{"pod-level guaranteed", resizePod(none, none, withPodResources(rl("1", "1Gi", ""), rl("1", "1Gi", ""))), corev1.PodQOSGuaranteed},
		{"empty pod-level", resizePod(rl("1", "1Gi", ""), rl("1", "1Gi", ""), withPodResources(nil, nil)), corev1.PodQOSGuaranteed},
	} {
		if got := computePodQOS(tc.pod); got != tc.want {
			t.Errorf("%s: computePodQOS = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestPreparePodForCreatePodLevel: a create completes pod-level resources
// and computes the QoS class whatever the client sent (checked on
// kube-apiserver 1.37.2: Burstable, requests cpu 500m memory 64Mi, limits
// memory 128Mi).
func TestPreparePodForCreatePodLevel(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Resources: &corev1.ResourceRequirements{Requests: rl("500m", "", "")},
		Containers: []corev1.Container{{Name: "c", Image: "img", Resources: corev1.ResourceRequirements{
			Requests: rl("100m", "64Mi", ""), Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}}}},
		Status: corev1.PodStatus{QOSClass: corev1.PodQOSGuaranteed}}
	defaultPod(pod)
	preparePodForCreate(pod)
	r := pod.Spec.Resources
	got := []string{string(pod.Status.QOSClass), r.Requests.Cpu().String(), r.Requests.Memory().String(), r.Limits.Memory().String()}
	if want := []string{"Burstable", "500m", "64Mi", "128Mi"}; strings.Join(got, " ") != strings.Join(want, " ") || r.Limits.Cpu().String() != "0" {
		t.Errorf("prepared pod: qos, cpu and memory requests, memory limit = %v (cpu limit %v), want %v and no cpu limit", got, r.Limits.Cpu(), want)
	}
}

// TestPodUpdateKeepsPodLevelResources: an update of the main resource
// without spec.resources keeps the stored ones.
func TestPodUpdateKeepsPodLevelResources(t *testing.T) {
	old := resizePod(rl("100m", "", ""), none, withPodResources(rl("500m", "", ""), none))
	sent := old.DeepCopy()
	sent.Spec.Resources = nil
	if errs := updateErrors(t, sent, old); len(errs) > 0 || sent.Spec.Resources == nil {
		t.Errorf("update without pod-level resources: errors %v, resources %v; want none and the stored ones", errs, sent.Spec.Resources)
	}
}
