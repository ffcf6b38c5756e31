package limitranger

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
)

// The inputs of upstream's admission_test.go, rewritten for v1 types.

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

func one(name corev1.ResourceName, q string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if q != "" {
		l[name] = resource.MustParse(q)
	}
	return l
}

func eph(q string) corev1.ResourceList { return one(corev1.ResourceEphemeralStorage, q) }

func rr(requests, limits corev1.ResourceList) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: requests, Limits: limits}
}

func limitRange(t corev1.LimitType, min, max, def, defReq, ratio corev1.ResourceList) *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "abc", Namespace: "test"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: t, Min: min, Max: max, Default: def, DefaultRequest: defReq, MaxLimitRequestRatio: ratio}}}}
}

func validLimitRange() *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "abc", Namespace: "test"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypePod, Max: compute("200m", "4Gi"), Min: compute("50m", "2Mi")},
			{Type: corev1.LimitTypeContainer, Max: compute("100m", "2Gi"), Min: compute("25m", "1Mi"), Default: compute("75m", "10Mi"), DefaultRequest: compute("50m", "5Mi")},
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
	p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{RestartPolicy: &always, Name: "foo-" + strconv.Itoa(n), Image: "foo:V" + strconv.Itoa(n), Resources: rr(requests, limits)})
	return p
}

func withPodResources(p *corev1.Pod, r corev1.ResourceRequirements) *corev1.Pod {
	p.Spec.Resources = &r
	return p
}

func claim(name string, requests corev1.ResourceList) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"},
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: requests}}}
}

type podCase struct {
	pod      *corev1.Pod
	lr       *corev1.LimitRange
	podLevel bool
}

// upstreamPodCases are TestPodLimitFunc's success and error cases.
func upstreamPodCases() []podCase {
	ctr, podT, none := corev1.LimitTypeContainer, corev1.LimitTypePod, corev1.ResourceList{}
	return []podCase{
		// success cases
		{pod: pod("ctr-min-cpu-request", 1, rr(compute("100m", ""), nil)), lr: limitRange(ctr, compute("50m", ""), none, none, none, none)},
		{pod: pod("ctr-min-cpu-request-limit", 1, rr(compute("100m", ""), compute("200m", ""))), lr: limitRange(ctr, compute("50m", ""), none, none, none, none)},
		{pod: pod("ctr-min-memory-request", 1, rr(compute("", "60Mi"), nil)), lr: limitRange(ctr, compute("", "50Mi"), none, none, none, none)},
		{pod: pod("ctr-min-memory-request-limit", 1, rr(compute("", "60Mi"), compute("", "100Mi"))), lr: limitRange(ctr, compute("", "50Mi"), none, none, none, none)},
		{pod: pod("ctr-max-cpu-request-limit", 1, rr(compute("500m", ""), compute("1", ""))), lr: limitRange(ctr, none, compute("2", ""), none, none, none)},
		{pod: pod("ctr-max-cpu-limit", 1, rr(nil, compute("1", ""))), lr: limitRange(ctr, none, compute("2", ""), none, none, none)},
		{pod: pod("ctr-max-mem-request-limit", 1, rr(compute("", "250Mi"), compute("", "500Mi"))), lr: limitRange(ctr, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("ctr-max-cpu-ratio", 1, rr(compute("500m", ""), compute("750m", ""))), lr: limitRange(ctr, none, none, none, none, compute("1.5", ""))},
		{pod: pod("ctr-max-mem-limit", 1, rr(nil, compute("", "500Mi"))), lr: limitRange(ctr, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("pod-min-cpu-request", 2, rr(compute("75m", ""), nil)), lr: limitRange(podT, compute("100m", ""), none, none, none, none)},
		{pod: pod("pod-min-cpu-request-limit", 2, rr(compute("75m", ""), compute("200m", ""))), lr: limitRange(podT, compute("100m", ""), none, none, none, none)},
		{pod: pod("pod-min-memory-request", 2, rr(compute("", "60Mi"), nil)), lr: limitRange(podT, compute("", "100Mi"), none, none, none, none)},
		{pod: pod("pod-min-memory-request-limit", 2, rr(compute("", "60Mi"), compute("", "100Mi"))), lr: limitRange(podT, compute("", "100Mi"), none, none, none, none)},
		{pod: withInit(pod("pod-init-min-memory-request", 2, rr(compute("", "60Mi"), nil)), rr(compute("", "100Mi"), nil)), lr: limitRange(podT, compute("", "100Mi"), none, none, none, none)},
		{pod: withInit(pod("pod-init-min-memory-request-limit", 2, rr(compute("", "60Mi"), compute("", "100Mi"))), rr(compute("", "80Mi"), compute("", "100Mi"))), lr: limitRange(podT, compute("", "100Mi"), none, none, none, none)},
		{pod: pod("pod-max-cpu-request-limit", 2, rr(compute("500m", ""), compute("1", ""))), lr: limitRange(podT, none, compute("2", ""), none, none, none)},
		{pod: pod("pod-max-cpu-limit", 2, rr(nil, compute("1", ""))), lr: limitRange(podT, none, compute("2", ""), none, none, none)},
		{pod: withInit(pod("pod-init-max-cpu-request-limit", 2, rr(compute("500m", ""), compute("1", ""))), rr(compute("1", ""), compute("2", "")), rr(compute("1", ""), compute("1", ""))), lr: limitRange(podT, none, compute("2", ""), none, none, none)},
		{pod: withInit(pod("pod-init-max-cpu-limit", 2, rr(nil, compute("1", ""))), rr(nil, compute("2", "")), rr(nil, compute("2", ""))), lr: limitRange(podT, none, compute("2", ""), none, none, none)},
		{pod: pod("pod-max-mem-request-limit", 2, rr(compute("", "250Mi"), compute("", "500Mi"))), lr: limitRange(podT, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("pod-max-mem-limit", 2, rr(nil, compute("", "500Mi"))), lr: limitRange(podT, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("pod-max-mem-ratio", 3, rr(compute("", "300Mi"), compute("", "450Mi"))), lr: limitRange(podT, none, compute("", "2Gi"), none, none, compute("", "1.5"))},
		{pod: pod("ctr-1-min-local-ephemeral-storage-request", 1, rr(eph("60Mi"), nil)), lr: limitRange(ctr, eph("50Mi"), none, none, none, none)},
		{pod: pod("ctr-1-min-local-ephemeral-storage-request-limit", 1, rr(eph("60Mi"), eph("100Mi"))), lr: limitRange(ctr, eph("50Mi"), none, none, none, none)},
		{pod: pod("ctr-1-max-local-ephemeral-storage-request-limit", 1, rr(eph("250Mi"), eph("500Mi"))), lr: limitRange(ctr, none, eph("1Gi"), none, none, none)},
		{pod: pod("ctr-1-max-local-ephemeral-storage-limit", 1, rr(nil, eph("500Mi"))), lr: limitRange(ctr, none, eph("1Gi"), none, none, none)},
		{pod: pod("ctr-2-min-local-ephemeral-storage-request", 2, rr(eph("60Mi"), nil)), lr: limitRange(ctr, eph("50Mi"), none, none, none, none)},
		{pod: pod("ctr-2-min-local-ephemeral-storage-request-limit", 2, rr(eph("60Mi"), eph("100Mi"))), lr: limitRange(ctr, eph("50Mi"), none, none, none, none)},
		{pod: pod("ctr-2-max-local-ephemeral-storage-request-limit", 2, rr(eph("250Mi"), eph("500Mi"))), lr: limitRange(ctr, none, eph("600Mi"), none, none, none)},
		{pod: pod("ctr-2-max-local-ephemeral-storage-limit", 2, rr(nil, eph("500Mi"))), lr: limitRange(ctr, none, eph("600Mi"), none, none, none)},
		{pod: pod("pod-min-local-ephemeral-storage-request", 2, rr(eph("60Mi"), nil)), lr: limitRange(podT, eph("100Mi"), none, none, none, none)},
		{pod: pod("pod-min-local-ephemeral-storage-request-limit", 2, rr(eph("60Mi"), eph("100Mi"))), lr: limitRange(podT, eph("100Mi"), none, none, none, none)},
		{pod: withInit(pod("pod-init-min-local-ephemeral-storage-request", 2, rr(eph("60Mi"), nil)), rr(eph("100Mi"), nil)), lr: limitRange(podT, eph("100Mi"), none, none, none, none)},
		{pod: withInit(pod("pod-init-min-local-ephemeral-storage-request-limit", 2, rr(eph("60Mi"), eph("100Mi"))), rr(eph("80Mi"), eph("100Mi"))), lr: limitRange(podT, eph("100Mi"), none, none, none, none)},
		{pod: pod("pod-max-local-ephemeral-storage-request-limit", 2, rr(eph("250Mi"), eph("500Mi"))), lr: limitRange(podT, none, eph("1Gi"), none, none, none)},
		{pod: pod("pod-max-local-ephemeral-storage-limit", 2, rr(nil, eph("500Mi"))), lr: limitRange(podT, none, eph("1Gi"), none, none, none)},
		{pod: pod("pod-max-local-ephemeral-storage-ratio", 3, rr(eph("300Mi"), eph("450Mi"))), lr: limitRange(podT, none, eph("2Gi"), none, none, eph("1.5"))},
		{pod: withPodResources(pod("pod-level-resources-with-min-max", 3, rr(compute("100m", "60Mi"), compute("200m", "100Mi"))), rr(compute("200m", "180Mi"), compute("400m", "200Mi"))),
			lr: limitRange(podT, none, compute("400m", "200Mi"), none, none, none), podLevel: true},
		{pod: withPodResources(pod("pod-level-requests-with-min", 3, rr(compute("50m", "60Mi"), nil)), rr(compute("160m", "200Mi"), nil)),
			lr: limitRange(podT, compute("160m", "200Mi"), compute("", ""), none, none, none), podLevel: true},
		{pod: withPodResources(pod("pod-level-limits-with-max", 3, rr(nil, compute("50m", "60Mi"))), rr(nil, compute("160m", "200Mi"))),
			lr: limitRange(podT, compute("", ""), compute("160m", "200Mi"), none, none, none), podLevel: true},
		// error cases
		{pod: pod("ctr-min-cpu-request-err", 1, rr(compute("40m", ""), nil)), lr: limitRange(ctr, compute("50m", ""), none, none, none, none)},
		{pod: pod("ctr-min-cpu-request-limit-err", 1, rr(compute("40m", ""), compute("200m", ""))), lr: limitRange(ctr, compute("50m", ""), none, none, none, none)},
		{pod: pod("ctr-min-cpu-no-request-limit", 1, rr(nil, nil)), lr: limitRange(ctr, compute("50m", ""), none, none, none, none)},
		{pod: pod("ctr-min-memory-request-err", 1, rr(compute("", "40Mi"), nil)), lr: limitRange(ctr, compute("", "50Mi"), none, none, none, none)},
		{pod: pod("ctr-min-memory-request-limit-err", 1, rr(compute("", "40Mi"), compute("", "100Mi"))), lr: limitRange(ctr, compute("", "50Mi"), none, none, none, none)},
		{pod: pod("ctr-min-memory-no-request-limit", 1, rr(nil, nil)), lr: limitRange(ctr, compute("", "50Mi"), none, none, none, none)},
		{pod: pod("ctr-max-cpu-request-limit-err", 1, rr(compute("500m", ""), compute("2500m", ""))), lr: limitRange(ctr, none, compute("2", ""), none, none, none)},
		{pod: pod("ctr-max-cpu-limit-err", 1, rr(nil, compute("2500m", ""))), lr: limitRange(ctr, none, compute("2", ""), none, none, none)},
		{pod: pod("ctr-max-cpu-no-request-limit", 1, rr(nil, nil)), lr: limitRange(ctr, none, compute("2", ""), none, none, none)},
		{pod: pod("ctr-max-cpu-ratio-err", 1, rr(compute("1250m", ""), compute("2500m", ""))), lr: limitRange(ctr, none, none, none, none, compute("1", ""))},
		{pod: pod("ctr-max-mem-request-limit-err", 1, rr(compute("", "250Mi"), compute("", "2Gi"))), lr: limitRange(ctr, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("ctr-max-mem-limit-err", 1, rr(nil, compute("", "2Gi"))), lr: limitRange(ctr, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("ctr-max-mem-no-request-limit", 1, rr(nil, nil)), lr: limitRange(ctr, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("pod-min-cpu-request-err", 1, rr(compute("75m", ""), nil)), lr: limitRange(podT, compute("100m", ""), none, none, none, none)},
		{pod: pod("pod-min-cpu-request-limit-err", 1, rr(compute("75m", ""), compute("200m", ""))), lr: limitRange(podT, compute("100m", ""), none, none, none, none)},
		{pod: pod("pod-min-memory-request-err", 1, rr(compute("", "60Mi"), nil)), lr: limitRange(podT, compute("", "100Mi"), none, none, none, none)},
		{pod: pod("pod-min-memory-request-limit-err", 1, rr(compute("", "60Mi"), compute("", "100Mi"))), lr: limitRange(podT, compute("", "100Mi"), none, none, none, none)},
		{pod: pod("pod-max-cpu-request-limit-err", 3, rr(compute("500m", ""), compute("1", ""))), lr: limitRange(podT, none, compute("2", ""), none, none, none)},
		{pod: pod("pod-max-cpu-limit-err", 3, rr(nil, compute("1", ""))), lr: limitRange(podT, none, compute("2", ""), none, none, none)},
		{pod: pod("pod-max-mem-request-limit-err", 3, rr(compute("", "250Mi"), compute("", "500Mi"))), lr: limitRange(podT, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("pod-max-mem-limit-err", 3, rr(nil, compute("", "500Mi"))), lr: limitRange(podT, none, compute("", "1Gi"), none, none, none)},
		{pod: withInit(pod("pod-init-max-mem-limit", 1, rr(nil, compute("", "500Mi"))), rr(nil, compute("", "1.5Gi"))), lr: limitRange(podT, none, compute("", "1Gi"), none, none, none)},
		{pod: pod("pod-max-mem-ratio-err", 3, rr(compute("", "250Mi"), compute("", "500Mi"))), lr: limitRange(podT, none, compute("", "2Gi"), none, none, compute("", "1.5"))},
		{pod: pod("ctr-1-min-local-ephemeral-storage-request-err", 1, rr(eph("40Mi"), nil)), lr: limitRange(ctr, eph("50Mi"), none, none, none, none)},
		{pod: pod("ctr-1-min-local-ephemeral-storage-request-limit-err", 1, rr(eph("40Mi"), eph("100Mi"))), lr: limitRange(ctr, eph("50Mi"), none, none, none, none)},
		{pod: pod("ctr-1-min-local-ephemeral-storage-no-request-limit", 1, rr(nil, nil)), lr: limitRange(ctr, eph("50Mi"), none, none, none, none)},
		{pod: pod("ctr-1-max-local-ephemeral-storage-request-limit-err", 1, rr(eph("250Mi"), eph("2Gi"))), lr: limitRange(ctr, none, eph("1Gi"), none, none, none)},
		{pod: pod("ctr-1-max-local-ephemeral-storage-limit-err", 1, rr(nil, eph("2Gi"))), lr: limitRange(ctr, none, eph("1Gi"), none, none, none)},
		{pod: pod("ctr-1-max-local-ephemeral-storage-no-request-limit", 1, rr(nil, nil)), lr: limitRange(ctr, none, eph("1Gi"), none, none, none)},
		{pod: pod("ctr-2-min-local-ephemeral-storage-request-err", 2, rr(eph("40Mi"), nil)), lr: limitRange(ctr, eph("50Mi"), none, none, none, none)},
		{pod: pod("ctr-2-min-local-ephemeral-storage-request-limit-err", 2, rr(eph("40Mi"), eph("100Mi"))), lr: limitRange(ctr, eph("50Mi"), none, none, none, none)},
		{pod: pod("ctr-2-min-local-ephemeral-storage-no-request-limit", 2, rr(nil, nil)), lr: limitRange(ctr, eph("50Mi"), none, none, none, none)},
		{pod: pod("ctr-2-max-local-ephemeral-storage-request-limit-err", 2, rr(eph("250Mi"), eph("2Gi"))), lr: limitRange(ctr, none, eph("1Gi"), none, none, none)},
		{pod: pod("ctr-2-max-local-ephemeral-storage-limit-err", 2, rr(nil, eph("2Gi"))), lr: limitRange(ctr, none, eph("1Gi"), none, none, none)},
		{pod: pod("ctr-2-max-local-ephemeral-storage-no-request-limit", 2, rr(nil, nil)), lr: limitRange(ctr, none, eph("1Gi"), none, none, none)},
		{pod: pod("pod-min-local-ephemeral-storage-request-err", 1, rr(eph("60Mi"), nil)), lr: limitRange(podT, eph("100Mi"), none, none, none, none)},
		{pod: pod("pod-min-local-ephemeral-storage-request-limit-err", 1, rr(eph("60Mi"), eph("100Mi"))), lr: limitRange(podT, eph("100Mi"), none, none, none, none)},
		{pod: pod("pod-max-local-ephemeral-storage-request-limit-err", 3, rr(eph("250Mi"), eph("500Mi"))), lr: limitRange(podT, none, eph("1Gi"), none, none, none)},
		{pod: pod("pod-max-local-ephemeral-storage-limit-err", 3, rr(nil, eph("500Mi"))), lr: limitRange(podT, none, eph("1Gi"), none, none, none)},
		{pod: withInit(pod("pod-init-max-local-ephemeral-storage-limit", 1, rr(nil, eph("500Mi"))), rr(nil, eph("1.5Gi"))), lr: limitRange(podT, none, eph("1Gi"), none, none, none)},
		{pod: pod("pod-max-local-ephemeral-storage-ratio-err", 3, rr(eph("250Mi"), eph("500Mi"))), lr: limitRange(podT, none, eph("2Gi"), none, none, eph("1.5"))},
		{pod: withSidecar(compute("1500m", ""), corev1.ResourceList{}, pod("ctr-max-cpu-limit-restartable-init-container", 1, rr(compute("1000m", ""), compute("1500m", "")))),
			lr: limitRange(podT, none, compute("2", ""), none, none, none)},
		{pod: withPodResources(pod("pod-level-resources-exceeding-max", 3, rr(compute("100m", "60Mi"), compute("200m", "100Mi"))), rr(compute("200m", "180Mi"), compute("500m", "280Mi"))),
			lr: limitRange(podT, none, compute("400m", "200Mi"), none, none, none), podLevel: true},
		{pod: withPodResources(pod("pod-level-requests-less-than-min", 3, rr(compute("50m", "60Mi"), nil)), rr(compute("100m", "200Mi"), nil)),
			lr: limitRange(podT, compute("160m", "200Mi"), compute("", ""), none, none, none), podLevel: true},
		{pod: withPodResources(pod("pod-level-limits-exceeding-max", 3, rr(nil, compute("50m", "60Mi"))), rr(nil, compute("160m", "300Mi"))),
			lr: limitRange(podT, compute("", ""), compute("160m", "200Mi"), none, none, none), podLevel: true},
		// TestMergePodResourceRequirements and TestPodLimitFuncApplyDefault
		{pod: pod("empty-resources", 1, rr(nil, nil)), lr: validLimitRange()},
		{pod: withInit(pod("limit-memory", 1, rr(compute("", "512Mi"), nil)), rr(compute("", "512Mi"), nil)), lr: validLimitRange()},
		{pod: withInit(pod("limit-all", 1, rr(compute("100m", "512Mi"), compute("200m", "1G"))), rr(compute("200m", "1G"), compute("400m", "2G"))), lr: validLimitRange()},
		{pod: withInit(pod("foo", 1, rr(corev1.ResourceList{}, corev1.ResourceList{})), rr(corev1.ResourceList{}, corev1.ResourceList{})), lr: validLimitRange()},
	}
}

// TestUpstreamTables runs upstream's tables through both plugins, with
// the gate as each case sets it and the other way round.
func TestUpstreamTables(t *testing.T) {
	var rs []request
	for _, tc := range upstreamPodCases() {
		for _, podLevel := range []bool{tc.podLevel, !tc.podLevel} {
			rs = append(rs, request{name: tc.pod.Name, op: admission.Create, resource: "pods", obj: tc.pod, ranges: []*corev1.LimitRange{tc.lr}, podLevel: podLevel})
		}
	}
	pvc, none := corev1.LimitTypePersistentVolumeClaim, corev1.ResourceList{}
	st := func(q string) corev1.ResourceList { return one(corev1.ResourceStorage, q) }
	for _, tc := range []struct {
		pvc *corev1.PersistentVolumeClaim
		lr  *corev1.LimitRange
	}{
		{claim("pvc-is-min-storage-request", st("1Gi")), limitRange(pvc, st("1Gi"), none, none, none, none)},
		{claim("pvc-is-max-storage-request", st("1Gi")), limitRange(pvc, none, st("1Gi"), none, none, none)},
		{claim("pvc-no-minmax-storage-request", st("100Gi")), limitRange(pvc, st(""), st(""), none, none, none)},
		{claim("pvc-within-minmax-storage-request", st("5Gi")), limitRange(pvc, st("1Gi"), st("10Gi"), none, none, none)},
		{claim("pvc-below-min-storage-request", st("500Mi")), limitRange(pvc, st("1Gi"), none, none, none, none)},
		{claim("pvc-exceeds-max-storage-request", st("100Gi")), limitRange(pvc, st("1Gi"), st("1Gi"), none, none, none)},
	} {
		for _, op := range []admission.Operation{admission.Create, admission.Update} {
			rs = append(rs, request{name: tc.pvc.Name, op: op, resource: "persistentvolumeclaims", obj: tc.pvc, old: tc.pvc, ranges: []*corev1.LimitRange{tc.lr}})
		}
	}
	// TestLimitRangerIgnoresSubresource, TestLimitRangerAllowPodResize and
	// TestLimitRangerAdmitPod.
	empty := pod("testPod", 1, rr(nil, nil))
	terminating := pod("terminatingPod", 1, rr(nil, nil))
	now := metav1.Now()
	terminating.DeletionTimestamp = &now
	for _, lr := range []*corev1.LimitRange{validLimitRangeNoDefaults(), validLimitRange()} {
		for _, r := range []request{
			{name: "create", op: admission.Create, obj: empty},
			{name: "update", op: admission.Update, obj: empty, old: empty},
			{name: "status", op: admission.Update, subresource: "status", obj: empty, old: empty},
			{name: "resize", op: admission.Update, subresource: "resize", obj: empty, old: empty},
			{name: "terminating", op: admission.Update, obj: terminating, old: terminating},
			{name: "terminating resize", op: admission.Update, subresource: "resize", obj: terminating, old: terminating},
		} {
			r.resource, r.ranges, r.podLevel = "pods", []*corev1.LimitRange{lr}, true
			rs = append(rs, r)
		}
	}
	var s stats
	s.compareAll(t, rs)
	t.Logf("%d cases compared: %d refused, %d mutated, %d with several violations in another order", s.cases, s.refused, s.mutated, s.reordered)
}
