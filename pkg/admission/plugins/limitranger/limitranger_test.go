package limitranger

import (
	"context"
	"errors"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// cache is an ObjectCache holding the LimitRanges of namespace "test".
type cache struct {
	ranges []*corev1.LimitRange
	err    error
}

func (c cache) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	return nil, errors.New("not used")
}

func (c cache) ListCachedObjects(_ context.Context, gvr schema.GroupVersionResource, namespace string, _ labels.Selector) ([]runtime.Object, error) {
	if gvr != limitRangesResource {
		return nil, errors.New("unexpected resource " + gvr.String())
	}
	if c.err != nil {
		return nil, c.err
	}
	var out []runtime.Object
	for _, lr := range c.ranges {
		if lr.Namespace == namespace {
			out = append(out, lr)
		}
	}
	return out, nil
}

func compute(cpu, memory string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		l[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return l
}

func storage(q string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if q != "" {
		l[corev1.ResourceStorage] = resource.MustParse(q)
	}
	return l
}

func ephemeral(q string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if q != "" {
		l[corev1.ResourceEphemeralStorage] = resource.MustParse(q)
	}
	return l
}

func reqs(requests, limits corev1.ResourceList) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: requests, Limits: limits}
}

// limitRange is one LimitRange of one item: min, max, default,
// defaultRequest and ratio, as upstream's createLimitRange.
func limitRange(t corev1.LimitType, min, max, def, defReq, ratio corev1.ResourceList) *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "abc", Namespace: "test"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: t, Min: min, Max: max, Default: def, DefaultRequest: defReq, MaxLimitRequestRatio: ratio}}}}
}

// validLimitRange is upstream's: Pod and Container items with defaults.
func validLimitRange() *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "abc", Namespace: "test"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypePod, Max: compute("200m", "4Gi"), Min: compute("50m", "2Mi")},
			{Type: corev1.LimitTypeContainer, Max: compute("100m", "2Gi"), Min: compute("25m", "1Mi"),
				Default: compute("75m", "10Mi"), DefaultRequest: compute("50m", "5Mi")},
		}}}
}

func validLimitRangeNoDefaults() *corev1.LimitRange {
	lr := validLimitRange()
	lr.Spec.Limits[1].Default, lr.Spec.Limits[1].DefaultRequest = nil, nil
	return lr
}

func pod(name string, n int, r corev1.ResourceRequirements) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"}}
	for i := 0; i < n; i++ {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "foo-" + strconv.Itoa(i), Image: "foo:V" + strconv.Itoa(i), Resources: *r.DeepCopy()})
	}
	return p
}

func withInit(p *corev1.Pod, rs ...corev1.ResourceRequirements) *corev1.Pod {
	for i, r := range rs {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "foo-" + strconv.Itoa(i), Image: "foo:V" + strconv.Itoa(i), Resources: *r.DeepCopy()})
	}
	return p
}

func withSidecar(requests, limits corev1.ResourceList, p *corev1.Pod) *corev1.Pod {
	always := corev1.ContainerRestartPolicyAlways
	n := len(p.Spec.InitContainers)
	p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{RestartPolicy: &always, Name: "foo-" + strconv.Itoa(n), Image: "foo:V" + strconv.Itoa(n), Resources: reqs(requests, limits)})
	return p
}

func withPodResources(p *corev1.Pod, r corev1.ResourceRequirements) *corev1.Pod {
	p.Spec.Resources = &r
	return p
}

func TestDefaultsFillEmptyContainer(t *testing.T) {
	var c corev1.Container
	mergeDefaults(&c, compileRange(validLimitRange()), "container", nil)
	want := reqs(compute("50m", "5Mi"), compute("75m", "10Mi"))
	if !equalLists(c.Resources.Requests, want.Requests) || !equalLists(c.Resources.Limits, want.Limits) {
		t.Errorf("defaults = %v, want %v", c.Resources, want)
	}
}

// TestDefaultsLaterItemWins: of two Container items giving the same
// default, the later one's is set, and each name is listed once.
func TestDefaultsLaterItemWins(t *testing.T) {
	lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, DefaultRequest: compute("10m", "1Mi"), Default: compute("20m", "2Mi")},
		{Type: corev1.LimitTypePod, Max: compute("1", "1Gi")},
		{Type: corev1.LimitTypeContainer, DefaultRequest: compute("30m", "")},
	}}}
	var c corev1.Container
	c.Name = "app"
	parts := mergeDefaults(&c, compileRange(lr), "container", nil)
	if got := c.Resources.Requests[corev1.ResourceCPU]; got.String() != "30m" {
		t.Errorf("cpu request = %s, want the later item's 30m", got.String())
	}
	if got := c.Resources.Requests[corev1.ResourceMemory]; got.String() != "1Mi" {
		t.Errorf("memory request = %s, want the earlier item's 1Mi", got.String())
	}
	want := "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app"
	if string(parts) != want {
		t.Errorf("annotation = %q, want %q", parts, want)
	}
}

func equalLists(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

func TestSetDefaults(t *testing.T) {
	lr := validLimitRange()
	cases := []struct {
		name       string
		pod        *corev1.Pod
		want       []corev1.ResourceRequirements // containers then init containers
		annotation string
	}{
		{"no resources", pod("empty", 1, reqs(nil, nil)),
			[]corev1.ResourceRequirements{reqs(compute("50m", "5Mi"), compute("75m", "10Mi"))},
			"LimitRanger plugin set: cpu, memory request for container foo-0; cpu, memory limit for container foo-0"},
		{"some resources", withInit(pod("some", 1, reqs(compute("", "512Mi"), nil)), reqs(compute("", "512Mi"), nil)),
			[]corev1.ResourceRequirements{reqs(compute("50m", "512Mi"), compute("75m", "10Mi")), reqs(compute("50m", "512Mi"), compute("75m", "10Mi"))},
			"LimitRanger plugin set: cpu request for container foo-0; cpu, memory limit for container foo-0; cpu request for init container foo-0; cpu, memory limit for init container foo-0"},
		{"all resources", withInit(pod("all", 1, reqs(compute("100m", "512Mi"), compute("200m", "1G"))), reqs(compute("200m", "1G"), compute("400m", "2G"))),
			[]corev1.ResourceRequirements{reqs(compute("100m", "512Mi"), compute("200m", "1G")), reqs(compute("200m", "1G"), compute("400m", "2G"))}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			setDefaults(compileRange(lr), tc.pod)
			var got []corev1.ResourceRequirements
			for _, c := range append(append([]corev1.Container{}, tc.pod.Spec.Containers...), tc.pod.Spec.InitContainers...) {
				got = append(got, c.Resources)
			}
			for i := range tc.want {
				if !equalLists(got[i].Requests, tc.want[i].Requests) || !equalLists(got[i].Limits, tc.want[i].Limits) {
					t.Errorf("container %d resources = %v, want %v", i, got[i], tc.want[i])
				}
			}
			if a, ok := tc.pod.Annotations[Annotation]; a != tc.annotation || ok != (tc.annotation != "") {
				t.Errorf("annotation = %q (present %v), want %q", a, ok, tc.annotation)
			}
		})
	}
}

type podCase struct {
	pod *corev1.Pod
	lr  *corev1.LimitRange
	plr bool // PodLevelResources
}

// TestPodLimits runs upstream's TestPodLimitFunc tables: defaults then
// validation.
func TestPodLimits(t *testing.T) {
	ctr, podT := corev1.LimitTypeContainer, corev1.LimitTypePod
	none := corev1.ResourceList{}
	ok := []podCase{
		{pod: pod("ctr-min-cpu-request", 1, reqs(compute("100m", ""), nil)), lr: limitRange(ctr, compute("50m", ""), none, none, none, none)},
		{pod: pod("ctr-min-cpu-request-limit", 1, reqs(compute("100m", ""), compute("200m", ""))), lr: limitRange(ctr, compute("50m", ""), none, none, none, none)},
		{pod: pod("ctr-min-memory-request", 1, reqs(compute("", "60Mi"), nil)), lr: limitRange(ctr, compute("", "50Mi"), none, none, none, none)},
		{pod: pod("ctr-min-memory-request-limit", 1, reqs(compute("", "60Mi"), compute("", "100Mi"))), lr: limitRange(ctr, compute("", "50Mi"), none, none, none, none)},
		{pod: pod("ctr-max-cpu-request-limit", 1, reqs(compute("500m", ""), compute("1", ""))), lr: limitRange(ctr, none, compute("2", ""), none, none, none)},
		{pod: pod("ctr-max-cpu-limit", 1, reqs(nil, compute("1", ""))), lr: limitRange(ctr, none, compute("2", ""), none, none, none)},
		{pod: pod("ctr-max-mem-request-limit", 1, reqs(compute("", "250Mi"), compute("", "500Mi"))), lr: limitRange(ctr, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("ctr-max-cpu-ratio", 1, reqs(compute("500m", ""), compute("750m", ""))), lr: limitRange(ctr, none, none, none, none, compute("1.5", ""))},
		{pod: pod("ctr-max-mem-limit", 1, reqs(nil, compute("", "500Mi"))), lr: limitRange(ctr, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("pod-min-cpu-request", 2, reqs(compute("75m", ""), nil)), lr: limitRange(podT, compute("100m", ""), none, none, none, none)},
		{pod: pod("pod-min-cpu-request-limit", 2, reqs(compute("75m", ""), compute("200m", ""))), lr: limitRange(podT, compute("100m", ""), none, none, none, none)},
		{pod: pod("pod-min-memory-request", 2, reqs(compute("", "60Mi"), nil)), lr: limitRange(podT, compute("", "100Mi"), none, none, none, none)},
		{pod: pod("pod-min-memory-request-limit", 2, reqs(compute("", "60Mi"), compute("", "100Mi"))), lr: limitRange(podT, compute("", "100Mi"), none, none, none, none)},
		{pod: withInit(pod("pod-init-min-memory-request", 2, reqs(compute("", "60Mi"), nil)), reqs(compute("", "100Mi"), nil)), lr: limitRange(podT, compute("", "100Mi"), none, none, none, none)},
		{pod: withInit(pod("pod-init-min-memory-request-limit", 2, reqs(compute("", "60Mi"), compute("", "100Mi"))), reqs(compute("", "80Mi"), compute("", "100Mi"))), lr: limitRange(podT, compute("", "100Mi"), none, none, none, none)},
		{pod: pod("pod-max-cpu-request-limit", 2, reqs(compute("500m", ""), compute("1", ""))), lr: limitRange(podT, none, compute("2", ""), none, none, none)},
		{pod: pod("pod-max-cpu-limit", 2, reqs(nil, compute("1", ""))), lr: limitRange(podT, none, compute("2", ""), none, none, none)},
		{pod: withInit(pod("pod-init-max-cpu-request-limit", 2, reqs(compute("500m", ""), compute("1", ""))), reqs(compute("1", ""), compute("2", "")), reqs(compute("1", ""), compute("1", ""))), lr: limitRange(podT, none, compute("2", ""), none, none, none)},
		{pod: withInit(pod("pod-init-max-cpu-limit", 2, reqs(nil, compute("1", ""))), reqs(nil, compute("2", "")), reqs(nil, compute("2", ""))), lr: limitRange(podT, none, compute("2", ""), none, none, none)},
		{pod: pod("pod-max-mem-request-limit", 2, reqs(compute("", "250Mi"), compute("", "500Mi"))), lr: limitRange(podT, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("pod-max-mem-limit", 2, reqs(nil, compute("", "500Mi"))), lr: limitRange(podT, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("pod-max-mem-ratio", 3, reqs(compute("", "300Mi"), compute("", "450Mi"))), lr: limitRange(podT, none, compute("", "2Gi"), none, none, compute("", "1.5"))},
		{pod: pod("ctr-1-min-local-ephemeral-storage-request", 1, reqs(ephemeral("60Mi"), nil)), lr: limitRange(ctr, ephemeral("50Mi"), none, none, none, none)},
		{pod: pod("ctr-1-min-local-ephemeral-storage-request-limit", 1, reqs(ephemeral("60Mi"), ephemeral("100Mi"))), lr: limitRange(ctr, ephemeral("50Mi"), none, none, none, none)},
		{pod: pod("ctr-1-max-local-ephemeral-storage-request-limit", 1, reqs(ephemeral("250Mi"), ephemeral("500Mi"))), lr: limitRange(ctr, none, ephemeral("1Gi"), none, none, none)},
		{pod: pod("ctr-1-max-local-ephemeral-storage-limit", 1, reqs(nil, ephemeral("500Mi"))), lr: limitRange(ctr, none, ephemeral("1Gi"), none, none, none)},
		{pod: pod("ctr-2-min-local-ephemeral-storage-request", 2, reqs(ephemeral("60Mi"), nil)), lr: limitRange(ctr, ephemeral("50Mi"), none, none, none, none)},
		{pod: pod("ctr-2-max-local-ephemeral-storage-request-limit", 2, reqs(ephemeral("250Mi"), ephemeral("500Mi"))), lr: limitRange(ctr, none, ephemeral("600Mi"), none, none, none)},
		{pod: pod("pod-min-local-ephemeral-storage-request-limit", 2, reqs(ephemeral("60Mi"), ephemeral("100Mi"))), lr: limitRange(podT, ephemeral("100Mi"), none, none, none, none)},
		{pod: withInit(pod("pod-init-min-local-ephemeral-storage-request", 2, reqs(ephemeral("60Mi"), nil)), reqs(ephemeral("100Mi"), nil)), lr: limitRange(podT, ephemeral("100Mi"), none, none, none, none)},
		{pod: pod("pod-max-local-ephemeral-storage-ratio", 3, reqs(ephemeral("300Mi"), ephemeral("450Mi"))), lr: limitRange(podT, none, ephemeral("2Gi"), none, none, ephemeral("1.5"))},
		{pod: withPodResources(pod("pod-level-resources-with-min-max", 3, reqs(compute("100m", "60Mi"), compute("200m", "100Mi"))), reqs(compute("200m", "180Mi"), compute("400m", "200Mi"))),
			lr: limitRange(podT, none, compute("400m", "200Mi"), none, none, none), plr: true},
		{pod: withPodResources(pod("pod-level-requests-with-min", 3, reqs(compute("50m", "60Mi"), nil)), reqs(compute("160m", "200Mi"), nil)),
			lr: limitRange(podT, compute("160m", "200Mi"), none, none, none, none), plr: true},
		{pod: withPodResources(pod("pod-level-limits-with-max", 3, reqs(nil, compute("50m", "60Mi"))), reqs(nil, compute("160m", "200Mi"))),
			lr: limitRange(podT, none, compute("160m", "200Mi"), none, none, none), plr: true},
	}
	for _, tc := range ok {
		t.Run(tc.pod.Name, func(t *testing.T) {
			setDefaults(compileRange(tc.lr), tc.pod)
			if err := validatePod(compileRange(tc.lr), tc.pod, Options{PodLevelResources: tc.plr}); err != nil {
				t.Errorf("validatePod = %v, want nil", err)
			}
		})
	}
	type errCase struct {
		podCase
		want string
	}
	bad := []errCase{
		{podCase{pod: pod("ctr-min-cpu-request", 1, reqs(compute("40m", ""), nil)), lr: limitRange(ctr, compute("50m", ""), none, none, none, none)},
			"minimum cpu usage per Container is 50m, but request is 40m"},
		{podCase{pod: pod("ctr-min-cpu-no-request-limit", 1, reqs(nil, nil)), lr: limitRange(ctr, compute("50m", ""), none, none, none, none)},
			"minimum cpu usage per Container is 50m.  No request is specified"},
		{podCase{pod: pod("ctr-min-memory-request-limit", 1, reqs(compute("", "60Mi"), compute("", "40Mi"))), lr: limitRange(ctr, compute("", "50Mi"), none, none, none, none)},
			"minimum memory usage per Container is 50Mi, but limit is 40Mi"},
		{podCase{pod: pod("ctr-max-cpu-request-limit", 1, reqs(compute("500m", ""), compute("2500m", ""))), lr: limitRange(ctr, none, compute("2", ""), none, none, none)},
			"maximum cpu usage per Container is 2, but limit is 2500m"},
		{podCase{pod: pod("ctr-max-cpu-no-request-limit", 1, reqs(nil, nil)), lr: limitRange(ctr, none, compute("2", ""), none, none, none)},
			"maximum cpu usage per Container is 2.  No limit is specified"},
		{podCase{pod: pod("ctr-max-cpu-request-above", 1, reqs(compute("3", ""), compute("1", ""))), lr: limitRange(ctr, none, compute("2", ""), none, none, none)},
			"maximum cpu usage per Container is 2, but request is 3"},
		{podCase{pod: pod("ctr-max-cpu-ratio", 1, reqs(compute("1250m", ""), compute("2500m", ""))), lr: limitRange(ctr, none, none, none, none, compute("1", ""))},
			"cpu max limit to request ratio per Container is 1, but provided ratio is 2.000000"},
		{podCase{pod: pod("ctr-ratio-no-request", 1, reqs(nil, compute("1", ""))), lr: limitRange(ctr, none, none, none, none, compute("1", ""))},
			"cpu max limit to request ratio per Container is 1, but no request is specified or request is 0"},
		{podCase{pod: pod("ctr-ratio-no-limit", 1, reqs(compute("1", ""), nil)), lr: limitRange(ctr, none, none, none, none, compute("1", ""))},
			"cpu max limit to request ratio per Container is 1, but no limit is specified or limit is 0"},
		{podCase{pod: pod("ctr-two-containers", 2, reqs(nil, nil)), lr: limitRange(ctr, compute("50m", "1Mi"), none, none, none, none)},
			"[minimum cpu usage per Container is 50m.  No request is specified, minimum memory usage per Container is 1Mi.  No request is specified]"}, // each container's two messages, deduplicated
		{podCase{pod: pod("ctr-two-resources", 1, reqs(compute("10m", ""), nil)), lr: limitRange(ctr, compute("50m", "1Mi"), none, none, none, none)},
			"[minimum cpu usage per Container is 50m, but request is 10m, minimum memory usage per Container is 1Mi.  No request is specified]"},
		{podCase{pod: pod("pod-min-cpu-request", 1, reqs(compute("75m", ""), nil)), lr: limitRange(podT, compute("100m", ""), none, none, none, none)},
			"minimum cpu usage per Pod is 100m, but request is 75m"},
		{podCase{pod: pod("pod-max-cpu-request-limit", 3, reqs(compute("500m", ""), compute("1", ""))), lr: limitRange(podT, none, compute("2", ""), none, none, none)},
			"maximum cpu usage per Pod is 2, but limit is 3"},
		{podCase{pod: pod("pod-max-mem-limit", 3, reqs(nil, compute("", "500Mi"))), lr: limitRange(podT, none, compute("", "1Gi"), none, none, none)},
			"maximum memory usage per Pod is 1Gi, but limit is 1500Mi"},
		{podCase{pod: withInit(pod("pod-init-max-mem-limit", 1, reqs(nil, compute("", "500Mi"))), reqs(nil, compute("", "1.5Gi"))), lr: limitRange(podT, none, compute("", "1Gi"), none, none, none)},
			"maximum memory usage per Pod is 1Gi, but limit is 1536Mi"},
		{podCase{pod: pod("pod-max-mem-ratio", 3, reqs(compute("", "250Mi"), compute("", "500Mi"))), lr: limitRange(podT, none, compute("", "2Gi"), none, none, compute("", "1.5"))},
			"memory max limit to request ratio per Pod is 1500m, but provided ratio is 2.000000"},
		{podCase{pod: pod("ctr-1-min-local-ephemeral-storage-no-request-limit", 1, reqs(nil, nil)), lr: limitRange(ctr, ephemeral("50Mi"), none, none, none, none)},
			"minimum ephemeral-storage usage per Container is 50Mi.  No request is specified"},
		{podCase{pod: withSidecar(compute("1500m", ""), nil, pod("ctr-max-cpu-limit-restartable-init-container", 1, reqs(compute("1000m", ""), compute("1500m", "")))),
			lr: limitRange(podT, none, compute("2", ""), none, none, none)},
			"maximum cpu usage per Pod is 2, but request is 2500m"}, // the sidecar counts with the containers
		{podCase{pod: withPodResources(pod("pod-level-resources-exceeding-max", 3, reqs(compute("100m", "60Mi"), compute("200m", "100Mi"))), reqs(compute("200m", "180Mi"), compute("500m", "280Mi"))),
			lr: limitRange(podT, none, compute("400m", "200Mi"), none, none, none), plr: true},
			"[maximum cpu usage per Pod is 400m, but limit is 500m, maximum memory usage per Pod is 200Mi, but limit is 280Mi]"},
		{podCase{pod: withPodResources(pod("pod-level-requests-less-than-min", 3, reqs(compute("50m", "60Mi"), nil)), reqs(compute("100m", "200Mi"), nil)),
			lr: limitRange(podT, compute("160m", "200Mi"), none, none, none, none), plr: true},
			"minimum cpu usage per Pod is 160m, but request is 100m"},
		{podCase{pod: withPodResources(pod("pod-level-limits-exceeding-max", 3, reqs(nil, compute("50m", "60Mi"))), reqs(nil, compute("160m", "300Mi"))),
			lr: limitRange(podT, none, compute("160m", "200Mi"), none, none, none), plr: true},
			"maximum memory usage per Pod is 200Mi, but limit is 300Mi"},
		{podCase{pod: withPodResources(pod("pod-level-resources-gate-off", 3, reqs(nil, compute("50m", "60Mi"))), reqs(nil, compute("160m", "300Mi"))),
			lr: limitRange(podT, none, compute("160m", "200Mi"), none, none, none)},
			""}, // the pod-level limits are not read: 3 × 60Mi ≤ 200Mi
	}
	for _, tc := range bad {
		t.Run(tc.pod.Name, func(t *testing.T) {
			setDefaults(compileRange(tc.lr), tc.pod)
			err := validatePod(compileRange(tc.lr), tc.pod, Options{PodLevelResources: tc.plr})
			if got := errText(err); got != tc.want {
				t.Errorf("validatePod = %q, want %q", got, tc.want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func claim(name string, requests corev1.ResourceList) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"},
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: requests}}}
}

func TestClaimLimits(t *testing.T) {
	pvc, none := corev1.LimitTypePersistentVolumeClaim, corev1.ResourceList{}
	cases := []struct {
		pvc  *corev1.PersistentVolumeClaim
		lr   *corev1.LimitRange
		want string
	}{
		{claim("pvc-is-min-storage-request", storage("1Gi")), limitRange(pvc, storage("1Gi"), none, none, none, none), ""},
		{claim("pvc-is-max-storage-request", storage("1Gi")), limitRange(pvc, none, storage("1Gi"), none, none, none), ""},
		{claim("pvc-no-minmax-storage-request", storage("100Gi")), limitRange(pvc, storage(""), storage(""), none, none, none), ""},
		{claim("pvc-within-minmax-storage-request", storage("5Gi")), limitRange(pvc, storage("1Gi"), storage("10Gi"), none, none, none), ""},
		{claim("pvc-below-min-storage-request", storage("500Mi")), limitRange(pvc, storage("1Gi"), none, none, none, none),
			"minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"},
		{claim("pvc-exceeds-max-storage-request", storage("100Gi")), limitRange(pvc, storage("1Gi"), storage("1Gi"), none, none, none),
			"maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Gi"},
		{claim("pvc-no-request", nil), limitRange(pvc, storage("1Gi"), storage("2Gi"), none, none, none),
			"[minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified, maximum storage usage per PersistentVolumeClaim is 2Gi.  No request is specified]"},
		{claim("pvc-container-item-ignored", storage("5Gi")), limitRange(corev1.LimitTypeContainer, none, storage("1Gi"), none, none, none), ""},
	}
	for _, tc := range cases {
		t.Run(tc.pvc.Name, func(t *testing.T) {
			if got := errText(validateClaim(compileRange(tc.lr), tc.pvc)); got != tc.want {
				t.Errorf("validateClaim = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPlugin runs whole requests: which requests the plugin looks at, its
// 403s and the annotation.
func TestPlugin(t *testing.T) {
	noDefaults := New(cache{ranges: []*corev1.LimitRange{validLimitRangeNoDefaults()}}, Options{PodLevelResources: true})
	empty := pod("testPod", 1, reqs(nil, nil))
	terminating := pod("terminatingPod", 1, reqs(nil, nil))
	now := metav1.Now()
	terminating.DeletionTimestamp = &now
	const noLimits = `pods "testPod" is forbidden: [minimum cpu usage per Pod is 50m.  No request is specified, minimum memory usage per Pod is 2Mi.  No request is specified, ` +
		`maximum cpu usage per Pod is 200m.  No limit is specified, maximum memory usage per Pod is 4Gi.  No limit is specified, ` +
		`minimum cpu usage per Container is 25m.  No request is specified, minimum memory usage per Container is 1Mi.  No request is specified, ` +
		`maximum cpu usage per Container is 100m.  No limit is specified, maximum memory usage per Container is 2Gi.  No limit is specified]`
	podsGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	admissiontest.Run(t, noDefaults, []admissiontest.Case{
		{Name: "create without limits", Attributes: admissiontest.Create(empty).Attributes(), WantErr: noLimits, WantCode: 403},
		{Name: "pod update is not looked at", Attributes: admissiontest.Update(empty, empty).Attributes()},
		{Name: "status update is not looked at", Attributes: admissiontest.Update(empty, empty).Resource(podsGVR, "status").Attributes()},
		{Name: "resize is looked at", Attributes: admissiontest.Update(empty, empty).Resource(podsGVR, "resize").Attributes(), WantErr: noLimits, WantCode: 403},
		{Name: "terminating pod is not looked at", Attributes: admissiontest.Update(terminating, terminating).Resource(podsGVR, "resize").Attributes()},
		{Name: "delete is not handled", Attributes: admissiontest.Delete(empty).Attributes()},
		{Name: "other namespace has no LimitRange", Attributes: admissiontest.Create(func() *corev1.Pod { p := empty.DeepCopy(); p.Namespace = "other"; return p }()).Attributes()},
		{Name: "other kinds are not looked at", Attributes: admissiontest.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "test"}}).Attributes()},
	})

	withDefaults := New(cache{ranges: []*corev1.LimitRange{validLimitRange()}}, Options{})
	defaulted := pod("testPod", 1, reqs(compute("50m", "5Mi"), compute("75m", "10Mi")))
	defaulted.Annotations = map[string]string{Annotation: "LimitRanger plugin set: cpu, memory request for container foo-0; cpu, memory limit for container foo-0"}
	admissiontest.Run(t, withDefaults, []admissiontest.Case{
		{Name: "defaults are set and annotated", Attributes: admissiontest.Create(pod("testPod", 1, reqs(nil, nil))).Attributes(), WantObject: defaulted},
		{Name: "defaults are set on resize", Attributes: admissiontest.Update(pod("testPod", 1, reqs(nil, nil)), empty).Resource(podsGVR, "resize").Attributes(), WantObject: defaulted},
		{Name: "defaults then max", Attributes: admissiontest.Create(pod("testPod", 1, reqs(compute("", "3Gi"), nil))).Attributes(),
			WantErr: `pods "testPod" is forbidden: maximum memory usage per Container is 2Gi, but request is 3Gi`, WantCode: 403},
	})

	claims := New(cache{ranges: []*corev1.LimitRange{limitRange(corev1.LimitTypePersistentVolumeClaim, nil, storage("1Gi"), nil, nil, nil)}}, Options{})
	big, small := claim("c", storage("2Gi")), claim("c", storage("1Gi"))
	const tooBig = `persistentvolumeclaims "c" is forbidden: maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 2Gi`
	admissiontest.Run(t, claims, []admissiontest.Case{
		{Name: "claim create", Attributes: admissiontest.Create(big).Attributes(), WantErr: tooBig, WantCode: 403},
		{Name: "claim update", Attributes: admissiontest.Update(big, small).Attributes(), WantErr: tooBig, WantCode: 403},
		{Name: "claim within max", Attributes: admissiontest.Create(small).Attributes()},
		{Name: "claim status", Attributes: admissiontest.Update(big, small).Resource(schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, "status").Attributes()},
	})

	broken := New(cache{err: errors.New("cache down")}, Options{})
	admissiontest.Run(t, broken, []admissiontest.Case{
		{Name: "cache error", Attributes: admissiontest.Create(empty).Attributes(), WantCode: 403,
			WantErr: `pods "testPod" is forbidden: unable to CREATE /v1, Resource=pods at this time because there was an error enforcing limit ranges`},
	})
}

// TestChangedLimitRangeIsRead: the plugin works from each LimitRange as
// compiled once per object; when the cache hands out a changed LimitRange
// (a new object, as a watch-fed cache does), its new defaults and bounds
// apply, and many objects do not grow the compiled set without bound.
func TestChangedLimitRangeIsRead(t *testing.T) {
	c := &cache{ranges: []*corev1.LimitRange{validLimitRange()}}
	p := New(c, Options{})
	admit := func() *corev1.Pod {
		t.Helper()
		obj := pod("p", 1, reqs(nil, nil))
		a := admissiontest.Create(obj).Attributes()
		if err := p.Admit(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	if got := admit().Spec.Containers[0].Resources.Limits.Cpu().String(); got != "75m" {
		t.Fatalf("default cpu limit = %s, want 75m", got)
	}
	changed := validLimitRange()
	changed.Spec.Limits[1].Default = compute("90m", "10Mi")
	c.ranges = []*corev1.LimitRange{changed}
	if got := admit().Spec.Containers[0].Resources.Limits.Cpu().String(); got != "90m" {
		t.Fatalf("after the change, default cpu limit = %s, want 90m", got)
	}
	for range 3 * maxCompiledRanges {
		p.compiled(validLimitRange())
	}
	if n := p.ranges.Len(); n > maxCompiledRanges || n == 0 {
		t.Fatalf("%d compiled LimitRanges held, want at most %d", n, maxCompiledRanges)
	}
}
