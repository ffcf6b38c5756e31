package hpa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// The metrics APIs the controller asks, as upstream's REST metrics client
// does (k8s.io/metrics' clients): the resource metrics API's pods, the
// custom metrics API's values of pods and objects (in the version
// discovery prefers, of v1beta2 and v1beta1), the external metrics API's
// values. Their types are declared here with only the fields read.

var (
	resourceMetricsGV = schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}
	externalMetricsGV = schema.GroupVersion{Group: "external.metrics.k8s.io", Version: "v1beta1"}
	customMetricsName = "custom.metrics.k8s.io"
	// customVersions are the custom metrics API versions known, the first
	// one chosen when discovery prefers none of them.
	customVersions = []string{"custom.metrics.k8s.io/v1beta2", "custom.metrics.k8s.io/v1beta1"}
)

// metricServerDefaultWindow is the window of a custom metric value that
// gives none.
const metricServerDefaultWindow = time.Minute

type podMetricsList struct {
	Items []podMetrics `json:"items"`
}

type podMetrics struct {
	metav1.ObjectMeta `json:"metadata"`
	Timestamp         metav1.Time        `json:"timestamp"`
	Window            metav1.Duration    `json:"window"`
	Containers        []containerMetrics `json:"containers"`
}

type containerMetrics struct {
	Name  string              `json:"name"`
	Usage corev1.ResourceList `json:"usage"`
}

type metricValueList struct {
	Items []metricValue `json:"items"`
}

type metricValue struct {
	DescribedObject corev1.ObjectReference `json:"describedObject"`
	Timestamp       metav1.Time            `json:"timestamp"`
	WindowSeconds   *int64                 `json:"windowSeconds"`
	Value           resource.Quantity      `json:"value"`
}

type externalMetricValueList struct {
	Items []struct {
		Timestamp metav1.Time       `json:"timestamp"`
		Value     resource.Quantity `json:"value"`
	} `json:"items"`
}

// podMetric is one pod's value of a metric (milli-units), sampled over
// window ending at timestamp.
type podMetric struct {
	timestamp time.Time
	window    time.Duration
	value     int64
}

// podMetricsInfo are the values of pods by name.
type podMetricsInfo map[string]podMetric

// metricsAPIs asks the metrics APIs through the server.
type metricsAPIs struct {
	rt        http.RoundTripper
	disc      discovery.DiscoveryInterface
	resources rest.Interface
	external  rest.Interface
	// customVersion is the custom metrics API's version discovery last
	// chose; empty until asked again.
	mu            sync.Mutex
	customVersion string
	customClient  rest.Interface
}

func restClientFor(rt http.RoundTripper, gv schema.GroupVersion) (rest.Interface, error) {
	cfg := loopbackConfig(rt)
	cfg.APIPath = "/apis"
	cfg.GroupVersion = &gv
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return rest.RESTClientFor(cfg)
}

func newMetricsAPIs(rt http.RoundTripper, disc discovery.DiscoveryInterface) (*metricsAPIs, error) {
	m := &metricsAPIs{rt: rt, disc: disc}
	var err error
	if m.resources, err = restClientFor(rt, resourceMetricsGV); err != nil {
		return nil, err
	}
	if m.external, err = restClientFor(rt, externalMetricsGV); err != nil {
		return nil, err
	}
	return m, nil
}

// withSelector adds a selector parameter unless the selector is nil or
// selects everything (as list options are encoded: empty is left out).
func withSelector(req *rest.Request, param string, selector labels.Selector) *rest.Request {
	if selector == nil || selector.String() == "" {
		return req
	}
	return req.Param(param, selector.String())
}

// decodeResult is the typed clients' Into: the server's Status as the
// error when there is one, else the body decoded into out.
func decodeResult(res rest.Result, out any) error {
	if err := res.Error(); err != nil {
		return err
	}
	body, err := res.Raw()
	if err != nil {
		return err
	}
	return json.Unmarshal(body, out)
}

// resourceMetric is each pod's usage of resource (of container, or of all
// its containers when container is empty) and the first sample's time.
func (m *metricsAPIs) resourceMetric(ctx context.Context, res corev1.ResourceName, namespace string, selector labels.Selector, container string) (podMetricsInfo, time.Time, error) {
	var list podMetricsList
	err := decodeResult(withSelector(m.resources.Get().Namespace(namespace).Resource("pods"), "labelSelector", selector).Do(ctx), &list)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from resource metrics API")
	}
	info := podMetricsInfo{}
	for _, pm := range list.Items {
		if v, ok := podUsage(pm, res, container); ok {
			info[pm.Name] = podMetric{timestamp: pm.Timestamp.Time, window: pm.Window.Duration, value: v}
		}
	}
	return info, list.Items[0].Timestamp.Time, nil
}

// podUsage sums a pod's containers' usage of res, or takes the named
// container's; a pod lacking it (no containers, one without res, no such
// container) has none.
func podUsage(pm podMetrics, res corev1.ResourceName, container string) (int64, bool) {
	if container != "" {
		for _, c := range pm.Containers {
			if c.Name == container {
				q, ok := c.Usage[res]
				return q.MilliValue(), ok
			}
		}
		return 0, false
	}
	if len(pm.Containers) == 0 {
		return 0, false
	}
	var sum int64
	for _, c := range pm.Containers {
		q, ok := c.Usage[res]
		if !ok {
			return 0, false
		}
		sum += q.MilliValue()
	}
	return sum, true
}

// invalidateEvery forgets the custom metrics API's version every period.
func (m *metricsAPIs) invalidateEvery(ctx context.Context, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			m.mu.Lock()
			m.customVersion, m.customClient = "", nil
			m.mu.Unlock()
		}
	}
}

// custom is a client of the custom metrics API's preferred version.
func (m *metricsAPIs) custom() (rest.Interface, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.customClient != nil {
		return m.customClient, nil
	}
	groups, err := m.disc.ServerGroups()
	if err != nil {
		return nil, err
	}
	var group *metav1.APIGroup
	for i := range groups.Groups {
		if groups.Groups[i].Name == customMetricsName {
			group = &groups.Groups[i]
			break
		}
	}
	if group == nil {
		return nil, fmt.Errorf("no custom metrics API (%s) registered", customMetricsName)
	}
	version := chooseCustomVersion(group)
	if version == "" {
		return nil, errors.New("no known available metric versions found")
	}
	gv, _ := schema.ParseGroupVersion(version)
	client, err := restClientFor(m.rt, gv)
	if err != nil {
		return nil, err
	}
	m.customVersion, m.customClient = version, client
	return client, nil
}

func chooseCustomVersion(group *metav1.APIGroup) string {
	pref := group.PreferredVersion.GroupVersion
	for _, v := range customVersions {
		if v == pref {
			return v
		}
	}
	for _, gv := range group.Versions {
		for _, v := range customVersions {
			if v == gv.GroupVersion {
				return v
			}
		}
	}
	return ""
}

// rawMetric is the custom metric's value of each pod selector picks.
func (m *metricsAPIs) rawMetric(ctx context.Context, name, namespace string, selector, metricSelector labels.Selector) (podMetricsInfo, time.Time, error) {
	list, err := m.customValues(ctx, namespace, "pods", "*", name, selector, metricSelector)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from custom metrics API")
	}
	info := podMetricsInfo{}
	for _, v := range list.Items {
		window := metricServerDefaultWindow
		if v.WindowSeconds != nil {
			window = time.Duration(*v.WindowSeconds) * time.Second
		}
		info[v.DescribedObject.Name] = podMetric{timestamp: v.Timestamp.Time, window: window, value: v.Value.MilliValue()}
	}
	return info, list.Items[0].Timestamp.Time, nil
}

// objectMetric is the custom metric's value of the object ref names.
func (m *metricsAPIs) objectMetric(ctx context.Context, mapper resourceMapper, name, namespace string, ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error) {
	v, err := m.objectValue(ctx, mapper, name, namespace, ref, metricSelector)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	return v.Value.MilliValue(), v.Timestamp.Time, nil
}

func (m *metricsAPIs) objectValue(ctx context.Context, mapper resourceMapper, name, namespace string, ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (*metricValue, error) {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var list *metricValueList
	var err error
	if gvk.Group == "" && gvk.Kind == "Namespace" {
		list, err = m.customValues(ctx, namespace, "metrics", "", name, nil, metricSelector)
	} else {
		var res string
		if res, err = mapper.qualifiedResource(gvk.GroupKind()); err != nil {
			return nil, err
		}
		list, err = m.customValues(ctx, namespace, res, ref.Name, name, nil, metricSelector)
	}
	if err != nil {
		return nil, err
	}
	if len(list.Items) != 1 {
		return nil, fmt.Errorf("the custom metrics API server returned %v results when we asked for exactly one", len(list.Items))
	}
	return &list.Items[0], nil
}

// customValues asks the custom metrics API for metric of the object
// (object "*": of the objects selector picks) of resource in namespace;
// resource "metrics" asks for the namespace's own metric.
func (m *metricsAPIs) customValues(ctx context.Context, namespace, res, object, metric string, selector, metricSelector labels.Selector) (*metricValueList, error) {
	client, err := m.custom()
	if err != nil {
		return nil, err
	}
	req := client.Get().Namespace(namespace).Resource(res)
	if res == "metrics" {
		req = req.Name(metric)
	} else {
		req = req.Name(object).SubResource(metric)
	}
	req = withSelector(withSelector(req, "labelSelector", selector), "metricLabelSelector", metricSelector)
	var list metricValueList
	if err := decodeResult(req.Do(ctx), &list); err != nil {
		return nil, err
	}
	return &list, nil
}

// externalMetric is each value of the external metric selector picks.
func (m *metricsAPIs) externalMetric(ctx context.Context, name, namespace string, selector labels.Selector) ([]int64, time.Time, error) {
	var list externalMetricValueList
	err := decodeResult(withSelector(m.external.Get().Namespace(namespace).Resource(name), "labelSelector", selector).Do(ctx), &list)
	if err != nil {
		return []int64{}, time.Time{}, fmt.Errorf("unable to fetch metrics from external metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from external metrics API")
	}
	values := make([]int64, 0, len(list.Items))
	for _, v := range list.Items {
		values = append(values, v.Value.MilliValue())
	}
	return values, list.Items[0].Timestamp.Time, nil
}
