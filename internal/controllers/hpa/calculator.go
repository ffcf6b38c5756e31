package hpa

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelpers "k8s.io/component-helpers/resource"
)

// tolerances bound the usage ratios (usage over target) close enough to 1
// to leave the replicas as they are.
type tolerances struct{ down, up float64 }

func (t tolerances) within(ratio float64) bool {
	return 1-t.down <= ratio && ratio <= 1+t.up
}

// calculator proposes replica counts from metric values and the target's
// pods, as upstream's ReplicaCalculator.
type calculator struct {
	metrics           *metricsAPIs
	mapper            resourceMapper
	pods              func(namespace string, selector labels.Selector) []*corev1.Pod
	cpuInitialization time.Duration
	readinessDelay    time.Duration
}

var (
	errNoPods      = errors.New("no pods returned by selector while calculating replica count")
	errNoneCounted = errors.New("did not receive metrics for targeted pods (pods might be unready)")
)

// resourceReplicas proposes replicas for a utilization target (percent
// of the pods' requests): the proposal, the utilization, the average
// usage and the metrics' time.
func (c *calculator) resourceReplicas(ctx context.Context, current, target int32, res corev1.ResourceName, tol tolerances, namespace string, selector labels.Selector, container string) (int32, int32, int64, time.Time, error) {
	metrics, ts, err := c.metrics.resourceMetric(ctx, res, namespace, selector, container)
	if err != nil {
		return 0, 0, 0, time.Time{}, fmt.Errorf("unable to get metrics for resource %s: %w", res, err)
	}
	pods := c.pods(namespace, selector)
	if len(pods) == 0 {
		return 0, 0, 0, time.Time{}, errNoPods
	}
	g := groupPods(pods, metrics, res, c.cpuInitialization, c.readinessDelay)
	g.dropUncounted(metrics)
	if len(metrics) == 0 {
		return 0, 0, 0, time.Time{}, errNoneCounted
	}
	requests, err := podRequests(pods, container, res)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}
	ratio, utilization, raw, err := utilizationRatio(metrics, requests, target)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}
	fallback := int64(max(100, target))
	missingValue := func(pod string) int64 { return requests[pod] * fallback / 100 }
	rebalanced := func() (float64, error) {
		r, _, _, err := utilizationRatio(metrics, requests, target)
		return r, err
	}
	n, err := proposeReplicas(current, ratio, tol, g, metrics, missingValue, rebalanced)
	if err != nil {
		return 0, utilization, raw, time.Time{}, err
	}
	return n, utilization, raw, ts, nil
}

// proposeReplicas is the proposal from the ready pods' usage ratio when
// every counted pod has a value and none unready would change the
// direction; else the pods without values are assumed at the target's
// edge against the move (missingValue when scaling down, 0 when scaling
// up), unready ones at 0 when scaling up, and the ratio taken again; a
// move the assumptions reverse or make smaller than the tolerance is none.
func proposeReplicas(current int32, ratio float64, tol tolerances, g podGroups, metrics podMetricsInfo, missingValue func(string) int64, recompute func() (float64, error)) (int32, error) {
	upWithUnready := len(g.unready) > 0 && ratio > 1
	if !upWithUnready && len(g.missing) == 0 {
		if tol.within(ratio) {
			return current, nil
		}
		return int32(math.Ceil(ratio * float64(g.ready))), nil
	}
	for pod := range g.missing {
		switch {
		case ratio < 1:
			metrics[pod] = podMetric{value: missingValue(pod)}
		case ratio > 1:
			metrics[pod] = podMetric{value: 0}
		}
	}
	if upWithUnready {
		for pod := range g.unready {
			metrics[pod] = podMetric{value: 0}
		}
	}
	newRatio, err := recompute()
	if err != nil {
		return 0, err
	}
	if tol.within(newRatio) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1) {
		return current, nil
	}
	n := int32(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1 && n > current) || (newRatio > 1 && n < current) {
		return current, nil
	}
	return n, nil
}

// rawResourceReplicas proposes replicas for an average usage target of a
// resource.
func (c *calculator) rawResourceReplicas(ctx context.Context, current int32, target int64, res corev1.ResourceName, tol tolerances, namespace string, selector labels.Selector, container string) (int32, int64, time.Time, error) {
	metrics, ts, err := c.metrics.resourceMetric(ctx, res, namespace, selector, container)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metrics for resource %s: %w", res, err)
	}
	n, usage, err := c.plainReplicas(metrics, current, target, tol, namespace, selector, res)
	return n, usage, ts, err
}

// podsMetricReplicas proposes replicas for an average value target of a
// custom metric of the pods.
func (c *calculator) podsMetricReplicas(ctx context.Context, current int32, target int64, metric string, tol tolerances, namespace string, selector, metricSelector labels.Selector) (int32, int64, time.Time, error) {
	metrics, ts, err := c.metrics.rawMetric(ctx, metric, namespace, selector, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s: %w", metric, err)
	}
	n, usage, err := c.plainReplicas(metrics, current, target, tol, namespace, selector, "")
	return n, usage, ts, err
}

// plainReplicas is the proposal for an average value target: pods without
// values are assumed at the target when scaling down.
func (c *calculator) plainReplicas(metrics podMetricsInfo, current int32, target int64, tol tolerances, namespace string, selector labels.Selector, res corev1.ResourceName) (int32, int64, error) {
	pods := c.pods(namespace, selector)
	if len(pods) == 0 {
		return 0, 0, errNoPods
	}
	g := groupPods(pods, metrics, res, c.cpuInitialization, c.readinessDelay)
	g.dropUncounted(metrics)
	if len(metrics) == 0 {
		return 0, 0, errNoneCounted
	}
	ratio, usage := usageRatio(metrics, target)
	recompute := func() (float64, error) {
		r, _ := usageRatio(metrics, target)
		return r, nil
	}
	n, err := proposeReplicas(current, ratio, tol, g, metrics, func(string) int64 { return target }, recompute)
	return n, usage, err
}

// objectReplicas proposes replicas for a value target of an object's
// metric.
func (c *calculator) objectReplicas(ctx context.Context, current int32, target int64, metric string, tol tolerances, namespace string, ref *autoscalingv2.CrossVersionObjectReference, selector, metricSelector labels.Selector) (int32, int64, time.Time, error) {
	usage, _, err := c.metrics.objectMetric(ctx, c.mapper, metric, namespace, ref, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s on %s %s/%s: %w", metric, ref.Kind, namespace, ref.Name, err)
	}
	n, err := c.ratioReplicas(current, float64(usage)/float64(target), tol, namespace, selector)
	return n, usage, time.Time{}, err
}

// ratioReplicas scales the ready pods by ratio (outside the tolerance);
// from zero replicas it is the ratio itself, rounded up.
func (c *calculator) ratioReplicas(current int32, ratio float64, tol tolerances, namespace string, selector labels.Selector) (int32, error) {
	if current == 0 {
		return int32(math.Ceil(ratio)), nil
	}
	if tol.within(ratio) {
		return current, nil
	}
	pods := c.pods(namespace, selector)
	if len(pods) == 0 {
		return 0, fmt.Errorf("unable to calculate ready pods: %s", errNoPods)
	}
	ready := 0
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && podReady(p) {
			ready++
		}
	}
	f := ratio * float64(ready)
	if f > math.MaxInt32 {
		return math.MaxInt32, nil
	}
	return int32(math.Ceil(f)), nil
}

// objectPerPodReplicas proposes replicas for an average value target of
// an object's metric: the value over the target, unless within the
// tolerance of the current replicas.
func (c *calculator) objectPerPodReplicas(ctx context.Context, statusReplicas int32, target int64, metric string, tol tolerances, namespace string, ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int32, int64, time.Time, error) {
	usage, ts, err := c.metrics.objectMetric(ctx, c.mapper, metric, namespace, ref, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s on %s %s/%s: %w", metric, ref.Kind, namespace, ref.Name, err)
	}
	n := statusReplicas
	if !tol.within(float64(usage) / (float64(target) * float64(n))) {
		n = int32(math.Ceil(float64(usage) / float64(target)))
	}
	return n, int64(math.Ceil(float64(usage) / float64(statusReplicas))), ts, nil
}

// externalReplicas proposes replicas for a value target of an external
// metric's sum.
func (c *calculator) externalReplicas(ctx context.Context, current int32, target int64, metric string, tol tolerances, namespace string, metricSelector *metav1.LabelSelector, selector labels.Selector) (int32, int64, time.Time, error) {
	sel, err := metav1.LabelSelectorAsSelector(metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	values, _, err := c.metrics.externalMetric(ctx, metric, namespace, sel)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get external metric %s/%s/%+v: %s", namespace, metric, metricSelector, err)
	}
	var usage int64
	for _, v := range values {
		if v > 0 && usage > math.MaxInt64-v {
			usage = math.MaxInt64
			break
		}
		usage += v
	}
	n, err := c.ratioReplicas(current, float64(usage)/float64(target), tol, namespace, selector)
	return n, usage, time.Time{}, err
}

// externalPerPodReplicas proposes replicas for an average value target of
// an external metric's sum.
func (c *calculator) externalPerPodReplicas(ctx context.Context, statusReplicas int32, target int64, metric string, tol tolerances, namespace string, metricSelector *metav1.LabelSelector) (int32, int64, time.Time, error) {
	sel, err := metav1.LabelSelectorAsSelector(metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	values, ts, err := c.metrics.externalMetric(ctx, metric, namespace, sel)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get external metric %s/%s/%+v: %s", namespace, metric, metricSelector, err)
	}
	var usage int64
	for _, v := range values {
		usage += v
		if usage < 0 {
			usage = math.MaxInt64
			break
		}
	}
	n := statusReplicas
	if !tol.within(float64(usage) / (float64(target) * float64(n))) {
		f := math.Ceil(float64(usage) / float64(target))
		n = int32(min(f, float64(math.MaxInt32)))
	}
	if float64(usage) >= float64(math.MaxInt64) {
		return n, math.MaxInt64, ts, nil
	}
	return n, int64(math.Ceil(float64(usage) / float64(statusReplicas))), ts, nil
}

// podGroups sorts the target's pods: ready ones counted, unready ones
// (pending, or for CPU still initializing), ones without a value, and
// ignored ones (deleted or failed).
type podGroups struct {
	ready                    int
	unready, missing, ignore sets.Set[string]
}

func (g podGroups) dropUncounted(metrics podMetricsInfo) {
	for pod := range g.ignore {
		delete(metrics, pod)
	}
	for pod := range g.unready {
		delete(metrics, pod)
	}
}

func groupPods(pods []*corev1.Pod, metrics podMetricsInfo, res corev1.ResourceName, cpuInitialization, readinessDelay time.Duration) podGroups {
	g := podGroups{unready: sets.New[string](), missing: sets.New[string](), ignore: sets.New[string]()}
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed {
			g.ignore.Insert(p.Name)
			continue
		}
		if p.Status.Phase == corev1.PodPending {
			g.unready.Insert(p.Name)
			continue
		}
		m, ok := metrics[p.Name]
		if !ok {
			g.missing.Insert(p.Name)
			continue
		}
		if res == corev1.ResourceCPU && cpuUnready(p, m, cpuInitialization, readinessDelay) {
			g.unready.Insert(p.Name)
			continue
		}
		g.ready++
	}
	return g
}

// cpuUnready reports a pod whose CPU sample is not to be trusted: during
// the initialization period, one not ready or whose sample began before it
// became ready; after it, one that has never been ready since shortly
// after starting.
func cpuUnready(p *corev1.Pod, m podMetric, cpuInitialization, readinessDelay time.Duration) bool {
	ready := readyCondition(p)
	if ready == nil || p.Status.StartTime == nil {
		return true
	}
	if p.Status.StartTime.Add(cpuInitialization).After(time.Now()) {
		return ready.Status == corev1.ConditionFalse || m.timestamp.Before(ready.LastTransitionTime.Add(m.window))
	}
	return ready.Status == corev1.ConditionFalse && p.Status.StartTime.Add(readinessDelay).After(ready.LastTransitionTime.Time)
}

func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	c := readyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// podRequests is each pod's request of res (milli-units): its pod-level
// request when it has one and no container is named, else the sum of its
// containers' (and restartable init containers') or the named one's.
func podRequests(pods []*corev1.Pod, container string, res corev1.ResourceName) (map[string]int64, error) {
	requests := make(map[string]int64, len(pods))
	for _, p := range pods {
		var r int64
		var err error
		if container == "" && resourcehelpers.IsPodLevelRequestsSet(p) {
			r, err = podLevelRequest(p, res)
		} else {
			r, err = containerRequests(p, container, res)
		}
		if err != nil {
			return nil, err
		}
		requests[p.Name] = r
	}
	return requests, nil
}

func podLevelRequest(p *corev1.Pod, res corev1.ResourceName) (int64, error) {
	q, ok := resourcehelpers.PodRequests(p, resourcehelpers.PodResourcesOptions{})[res]
	if !ok {
		return 0, fmt.Errorf("missing pod-level request for %s in Pod %s", res, p.Name)
	}
	return q.MilliValue(), nil
}

func containerRequests(p *corev1.Pod, container string, res corev1.ResourceName) (int64, error) {
	containers := append([]corev1.Container{}, p.Spec.Containers...)
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(containers, c)
		}
	}
	var sum int64
	for _, c := range containers {
		if container != "" && c.Name != container {
			continue
		}
		q, ok := c.Resources.Requests[res]
		if !ok {
			return 0, fmt.Errorf("missing request for %s in container %s of Pod %s", res, c.Name, p.Name)
		}
		sum += q.MilliValue()
		if container != "" {
			return sum, nil
		}
	}
	if container != "" {
		return 0, fmt.Errorf("container %s not found in Pod %s", container, p.Name)
	}
	return sum, nil
}

// utilizationRatio is the pods' usage over their requests, against the
// target percentage: the ratio, the utilization and the average usage.
func utilizationRatio(metrics podMetricsInfo, requests map[string]int64, target int32) (float64, int32, int64, error) {
	var usage, requested int64
	n := 0
	for pod, m := range metrics {
		r, ok := requests[pod]
		if !ok {
			continue
		}
		usage += m.value
		requested += r
		n++
	}
	if requested == 0 {
		return 0, 0, 0, errors.New("no metrics returned matched known pods")
	}
	utilization := int32(usage * 100 / requested)
	return float64(utilization) / float64(target), utilization, usage / int64(n), nil
}

// usageRatio is the pods' average value against the target.
func usageRatio(metrics podMetricsInfo, target int64) (float64, int64) {
	var total int64
	for _, m := range metrics {
		total += m.value
	}
	avg := total / int64(len(metrics))
	return float64(avg) / float64(target), avg
}
