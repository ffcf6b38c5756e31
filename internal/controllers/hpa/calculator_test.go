package hpa

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// scenario is one of upstream's replica calculator cases: pods of two
// containers, each container requesting requests[i] and using levels[i]
// (milli-CPU) when the pod has metrics.
type scenario struct {
	name      string
	current   int32
	requests  []string
	levels    []int64
	readiness []corev1.ConditionStatus
	phases    []corev1.PodPhase
	deleted   []bool
	hot       []bool // started now, within the CPU initialization period
	target    int32  // utilization percent
	want      int32
	wantUtil  int32
	wantRaw   int64
}

// Upstream's test settings: a 2 min CPU initialization period and a 10 s
// initial readiness delay; a "cool" pod started 3 min ago, a "hot" one
// now; pods without a start time given start at the zero time.
const (
	testCPUInitialization = 2 * time.Minute
	testReadinessDelay    = 10 * time.Second
)

var podLabels = map[string]string{"name": "test-pod"}

func (s scenario) pods() []*corev1.Pod {
	var pods []*corev1.Pod
	for i, r := range s.requests {
		ready, phase := corev1.ConditionTrue, corev1.PodRunning
		if i < len(s.readiness) {
			ready = s.readiness[i]
		}
		if s.phases != nil {
			phase = s.phases[i]
		}
		var started metav1.Time
		if s.hot != nil {
			started = metav1.NewTime(time.Now().Add(-3 * time.Minute))
			if s.hot[i] {
				started = metav1.Now()
			}
		}
		req := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(r)}}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("test-pod-%d", i), Namespace: ns, Labels: podLabels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "container1", Resources: req}, {Name: "container2", Resources: req}}},
			Status: corev1.PodStatus{Phase: phase, StartTime: &started,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
		if s.deleted != nil && s.deleted[i] {
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		pods = append(pods, p)
	}
	return pods
}

func (s scenario) metrics() []podMetrics {
	var out []podMetrics
	for i, level := range s.levels {
		q := *resource.NewMilliQuantity(level, resource.DecimalSI)
		out = append(out, podMetrics{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("test-pod-%d", i), Namespace: ns, Labels: podLabels},
			Window: metav1.Duration{Duration: time.Minute},
			Containers: []containerMetrics{{Name: "container1", Usage: corev1.ResourceList{corev1.ResourceCPU: q}},
				{Name: "container2", Usage: corev1.ResourceList{corev1.ResourceCPU: q}}}})
	}
	return out
}

func (s scenario) calculator(t *testing.T) *calculator {
	t.Helper()
	fake := &fakeMetrics{}
	fake.set(s.metrics()...)
	apis, err := newMetricsAPIs(fake, nil)
	if err != nil {
		t.Fatal(err)
	}
	pods := s.pods()
	return &calculator{metrics: apis, cpuInitialization: testCPUInitialization, readinessDelay: testReadinessDelay,
		pods: func(string, labels.Selector) []*corev1.Pod { return pods }}
}

var (
	notReady = corev1.ConditionFalse
	isReady  = corev1.ConditionTrue
)

func TestResourceUtilizationReplicas(t *testing.T) {
	cases := []scenario{
		{name: "scale up", current: 3, requests: []string{"1.0", "1.0", "1.0"}, levels: []int64{300, 500, 700}, target: 30, want: 5, wantUtil: 50, wantRaw: 1000},
		{name: "unready pod scales less", current: 3, requests: []string{"1.0", "1.0", "1.0"}, levels: []int64{300, 500, 700},
			readiness: []corev1.ConditionStatus{notReady, isReady, isReady}, target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "hot-CPU pod scales less", current: 3, requests: []string{"1.0", "1.0", "1.0"}, levels: []int64{300, 500, 700},
			hot: []bool{true, false, false}, target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "unready pods ignored: no scale", current: 3, requests: []string{"1.0", "1.0", "1.0"}, levels: []int64{400, 500, 700},
			readiness: []corev1.ConditionStatus{isReady, notReady, notReady}, target: 30, want: 3, wantUtil: 40, wantRaw: 800},
		{name: "failed pods ignored", current: 2, requests: []string{"1.0", "1.0", "1.0", "1.0"}, levels: []int64{500, 700},
			readiness: []corev1.ConditionStatus{isReady, isReady, notReady, notReady},
			phases:    []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodFailed, corev1.PodFailed}, target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "pods being deleted ignored", current: 2, requests: []string{"1.0", "1.0", "1.0", "1.0"}, levels: []int64{500, 700},
			readiness: []corev1.ConditionStatus{isReady, isReady, notReady, notReady}, deleted: []bool{false, false, true, true},
			target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "scale down", current: 5, requests: []string{"1.0", "1.0", "1.0", "1.0", "1.0"}, levels: []int64{100, 300, 500, 250, 250},
			target: 50, want: 3, wantUtil: 28, wantRaw: 560},
		{name: "within tolerance", current: 3, requests: []string{"0.9", "1.0", "1.1"}, levels: []int64{1010, 1030, 1020},
			target: 100, want: 3, wantUtil: 102, wantRaw: 2040},
		{name: "superfluous metrics counted", current: 4, requests: []string{"1.0", "1.0", "1.0", "1.0"}, levels: []int64{4000, 9500, 3000, 7000, 3200, 2000},
			target: 100, want: 24, wantUtil: 587, wantRaw: 11750},
		{name: "some pods missing metrics scales down", current: 4, requests: []string{"1.0", "1.0", "1.0", "1.0"}, levels: []int64{400, 95},
			target: 100, want: 3, wantUtil: 24, wantRaw: 495},
		{name: "missing metric, above target: no change", current: 2, requests: []string{"1.0", "1.0"}, levels: []int64{1900},
			target: 100, want: 2, wantUtil: 190, wantRaw: 3800},
		{name: "missing metric, below target: no change", current: 2, requests: []string{"1.0", "1.0"}, levels: []int64{600},
			target: 100, want: 2, wantUtil: 60, wantRaw: 1200},
		{name: "unready pod's metric missing, scale up", current: 3, requests: []string{"1.0", "1.0", "1.0"}, levels: []int64{100, 2000},
			readiness: []corev1.ConditionStatus{notReady, isReady, isReady}, target: 50, want: 4, wantUtil: 200, wantRaw: 4000},
	}
	for _, s := range cases {
		t.Run(s.name, func(t *testing.T) {
			n, util, raw, _, err := s.calculator(t).resourceReplicas(ctx, s.current, s.target, corev1.ResourceCPU, tolerances{0.1, 0.1}, ns, labels.SelectorFromSet(podLabels), "")
			if err != nil {
				t.Fatal(err)
			}
			if n != s.want || util != s.wantUtil || raw != s.wantRaw {
				t.Errorf("replicas %d utilization %d raw %d, want %d %d %d", n, util, raw, s.want, s.wantUtil, s.wantRaw)
			}
		})
	}
}

// A container's metric: the named container's usage over its request.
func TestContainerResourceReplicas(t *testing.T) {
	s := scenario{current: 3, requests: []string{"1.0", "1.0", "1.0"}, levels: []int64{300, 500, 700}}
	n, util, raw, _, err := s.calculator(t).resourceReplicas(ctx, 3, 30, corev1.ResourceCPU, tolerances{0.1, 0.1}, ns, labels.Everything(), "container2")
	if err != nil || n != 5 || util != 50 || raw != 500 {
		t.Fatalf("replicas %d utilization %d raw %d err %v, want 5 50 500", n, util, raw, err)
	}
	_, _, _, _, err = s.calculator(t).resourceReplicas(ctx, 3, 30, corev1.ResourceCPU, tolerances{0.1, 0.1}, ns, labels.Everything(), "nosuch")
	if want := "did not receive metrics for targeted pods (pods might be unready)"; err == nil || err.Error() != want {
		t.Fatalf("err %v, want %q", err, want)
	}
}

// An average value target: the pods' average usage (both containers)
// against it; pods lacking a request are no error there.
func TestAverageValueReplicas(t *testing.T) {
	s := scenario{requests: []string{"1.0", "1.0", "1.0"}, levels: []int64{300, 500, 700}}
	n, usage, _, err := s.calculator(t).rawResourceReplicas(ctx, 3, 500, corev1.ResourceCPU, tolerances{0.1, 0.1}, ns, labels.Everything(), "")
	if err != nil || n != 6 || usage != 1000 {
		t.Fatalf("replicas %d usage %d err %v, want 6 1000", n, usage, err)
	}
}

// The errors upstream's calculator and REST metrics client give.
func TestCalculatorErrors(t *testing.T) {
	noPods := scenario{levels: []int64{100}}
	_, _, _, _, err := noPods.calculator(t).resourceReplicas(ctx, 1, 50, corev1.ResourceCPU, tolerances{0.1, 0.1}, ns, labels.Everything(), "")
	if want := "no pods returned by selector while calculating replica count"; err == nil || err.Error() != want {
		t.Errorf("err %v, want %q", err, want)
	}
	noMetrics := scenario{requests: []string{"1.0"}}
	_, _, _, _, err = noMetrics.calculator(t).resourceReplicas(ctx, 1, 50, corev1.ResourceCPU, tolerances{0.1, 0.1}, ns, labels.Everything(), "")
	if want := "unable to get metrics for resource cpu: no metrics returned from resource metrics API"; err == nil || err.Error() != want {
		t.Errorf("err %v, want %q", err, want)
	}
	noRequest := scenario{requests: []string{"1.0"}, levels: []int64{100}}
	c := noRequest.calculator(t)
	pods := noRequest.pods()
	pods[0].Spec.Containers[1].Resources = corev1.ResourceRequirements{}
	c.pods = func(string, labels.Selector) []*corev1.Pod { return pods }
	_, _, _, _, err = c.resourceReplicas(ctx, 1, 50, corev1.ResourceCPU, tolerances{0.1, 0.1}, ns, labels.Everything(), "")
	if want := "missing request for cpu in container container2 of Pod test-pod-0"; err == nil || err.Error() != want {
		t.Errorf("err %v, want %q", err, want)
	}
}

// groupPods' CPU readiness rules, as upstream's cases: inside the
// initialization period a pod counts once ready before its sample's
// window began; after it, an unready pod counts unless it never became
// ready shortly after starting.
func TestCPUReadiness(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name                 string
		started, transition  time.Time
		ready                corev1.ConditionStatus
		window               time.Duration
		wantUnready, noStart bool
	}{
		{name: "no start time", noStart: true, ready: isReady, window: time.Minute, wantUnready: true},
		{name: "initializing, ready long before the window", started: now.Add(-time.Minute), transition: now.Add(-2 * time.Minute), ready: isReady, window: 30 * time.Second},
		{name: "initializing, ready inside the window", started: now.Add(-time.Minute), transition: now.Add(-30 * time.Second), ready: isReady, window: time.Minute, wantUnready: true},
		{name: "initializing, unready", started: now.Add(-time.Minute), transition: now.Add(-2 * time.Minute), ready: notReady, window: time.Second, wantUnready: true},
		{name: "initialized, unready since shortly after starting", started: now.Add(-10 * time.Minute), transition: now.Add(-9*time.Minute - 54*time.Second), ready: notReady, window: time.Minute, wantUnready: true},
		{name: "initialized, unready later", started: now.Add(-10 * time.Minute), transition: now.Add(-3 * time.Minute), ready: notReady, window: time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bentham"}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: tc.ready, LastTransitionTime: metav1.NewTime(tc.transition)}}}}
			if !tc.noStart {
				p.Status.StartTime = &metav1.Time{Time: tc.started}
			}
			metrics := podMetricsInfo{"bentham": {value: 1, timestamp: now, window: tc.window}}
			g := groupPods([]*corev1.Pod{p}, metrics, corev1.ResourceCPU, 5*time.Minute, 30*time.Second)
			if got := g.unready.Has("bentham"); got != tc.wantUnready {
				t.Errorf("unready %v, want %v", got, tc.wantUnready)
			}
		})
	}
}

// Upstream's pods metric cases: the pods' average value against the
// target, pods without a value assumed at the target when scaling down.
func TestPodsMetricReplicas(t *testing.T) {
	cases := []struct {
		name    string
		current int32
		values  []int64
		target  int64
		tol     tolerances
		want    int32
		usage   int64
	}{
		{"scale up", 3, []int64{20000, 10000, 30000}, 15000, tolerances{0.1, 0.1}, 4, 20000},
		{"scale down", 5, []int64{12000, 12000, 12000, 12000, 12000}, 20000, tolerances{0.1, 0.1}, 3, 12000},
		{"within default tolerance", 3, []int64{20000, 21000, 21000}, 20000, tolerances{0.1, 0.1}, 3, 20666},
		{"outside a configured 1% tolerance", 3, []int64{20000, 21000, 21000}, 20000, tolerances{0.01, 0.01}, 4, 20666},
		{"missing metrics: no change", 5, []int64{20000, 19000, 21000}, 20000, tolerances{0.1, 0.1}, 5, 20000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeMetrics{}
			var pods []*corev1.Pod
			for i := range tc.current {
				name := fmt.Sprintf("test-pod-%d", i)
				pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: podLabels},
					Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: isReady}}}})
				if int(i) < len(tc.values) {
					fake.custom = append(fake.custom, metricValue{DescribedObject: corev1.ObjectReference{Kind: "Pod", Name: name, Namespace: ns},
						Timestamp: metav1.Now(), Value: *resource.NewMilliQuantity(tc.values[i], resource.DecimalSI)})
				}
			}
			apis, err := newMetricsAPIs(fake, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The version discovery would choose, chosen already.
			if apis.customClient, err = restClientFor(fake, schema.GroupVersion{Group: "custom.metrics.k8s.io", Version: "v1beta2"}); err != nil {
				t.Fatal(err)
			}
			c := &calculator{metrics: apis, pods: func(string, labels.Selector) []*corev1.Pod { return pods }}
			n, usage, _, err := c.podsMetricReplicas(ctx, tc.current, tc.target, "qps", tc.tol, ns, labels.SelectorFromSet(podLabels), labels.Everything())
			if err != nil || n != tc.want || usage != tc.usage {
				t.Errorf("replicas %d usage %d err %v, want %d %d", n, usage, err, tc.want, tc.usage)
			}
		})
	}
}

// Upstream's external metric cases: a value target against the ready
// pods, an average value target against the status replicas.
func TestExternalMetricReplicas(t *testing.T) {
	readyPods := func(readiness ...corev1.ConditionStatus) []*corev1.Pod {
		var pods []*corev1.Pod
		for i, r := range readiness {
			pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("test-pod-%d", i), Namespace: ns},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: r}}}})
		}
		return pods
	}
	calc := func(t *testing.T, value int64, pods []*corev1.Pod) *calculator {
		apis, err := newMetricsAPIs(&fakeMetrics{external: []int64{value}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return &calculator{metrics: apis, pods: func(string, labels.Selector) []*corev1.Pod { return pods }}
	}
	def := tolerances{0.1, 0.1}
	value := []struct {
		name          string
		current       int32
		pods          []*corev1.Pod
		target        int64
		tol           tolerances
		want          int32
		wantUsage     int64
		usage         int64
		perPod        bool
		perPodCurrent int32
	}{
		{name: "value: scale down, unready pods not counted", current: 3, pods: readyPods(notReady, isReady, notReady), usage: 8600, target: 4400, tol: def, want: 2, wantUsage: 8600},
		{name: "value: scale down", current: 5, pods: readyPods(isReady, isReady, isReady, isReady, isReady), usage: 8600, target: 14334, tol: def, want: 3, wantUsage: 8600},
		{name: "value: within default tolerance", current: 3, pods: readyPods(isReady, isReady, isReady), usage: 8600, target: 8888, tol: def, want: 3, wantUsage: 8600},
		{name: "value: outside a 1% tolerance", current: 3, pods: readyPods(isReady, isReady, isReady), usage: 8900, target: 8800, tol: tolerances{0.01, 0.01}, want: 4, wantUsage: 8900},
		{name: "per pod: scale up", perPod: true, current: 3, usage: 8600, target: 2150, tol: def, want: 4, wantUsage: 2867},
		{name: "per pod: scale down", perPod: true, current: 5, usage: 8600, target: 2867, tol: def, want: 3, wantUsage: 1720},
		{name: "per pod: within default tolerance", perPod: true, current: 3, usage: 8600, target: 2900, tol: def, want: 3, wantUsage: 2867},
	}
	for _, tc := range value {
		t.Run(tc.name, func(t *testing.T) {
			c := calc(t, tc.usage, tc.pods)
			var n int32
			var usage int64
			var err error
			if tc.perPod {
				n, usage, _, err = c.externalPerPodReplicas(ctx, tc.current, tc.target, "qps", tc.tol, ns, nil)
			} else {
				n, usage, _, err = c.externalReplicas(ctx, tc.current, tc.target, "qps", tc.tol, ns, nil, labels.Everything())
			}
			if err != nil || n != tc.want || usage != tc.wantUsage {
				t.Errorf("replicas %d usage %d err %v, want %d %d", n, usage, err, tc.want, tc.wantUsage)
			}
		})
	}
}
