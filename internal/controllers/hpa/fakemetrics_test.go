package hpa

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
)

// fakeMetrics serves a resource metrics API (metrics.k8s.io/v1beta1
// pods, filtered by the label selector asked) in front of next, which
// answers every other request; with no next those are a plain 404.
type fakeMetrics struct {
	next http.RoundTripper
	mu   sync.Mutex
	pods []podMetrics
	// external are the external metrics API's values of any metric.
	external []int64
	// custom are the custom metrics API's values of pods.
	custom []metricValue
	// asked are the label selectors asked for.
	asked []string
}

func (f *fakeMetrics) set(pods ...podMetrics) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = pods
}

func (f *fakeMetrics) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/apis/external.metrics.k8s.io/v1beta1/namespaces/") && f.external != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
		var items []map[string]any
		for _, v := range f.external {
			items = append(items, map[string]any{"metricName": "qps", "timestamp": "2026-01-01T00:00:00Z", "value": resource.NewMilliQuantity(v, resource.DecimalSI).String()})
		}
		body, _ := json.Marshal(map[string]any{"kind": "ExternalMetricValueList", "apiVersion": "external.metrics.k8s.io/v1beta1", "items": items})
		return respond(r, http.StatusOK, "application/json", body), nil
	}
	if strings.HasPrefix(r.URL.Path, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/") && strings.Contains(r.URL.Path, "/pods/*/") {
		f.mu.Lock()
		defer f.mu.Unlock()
		body, _ := json.Marshal(map[string]any{"kind": "MetricValueList", "apiVersion": "custom.metrics.k8s.io/v1beta2", "items": f.custom})
		return respond(r, http.StatusOK, "application/json", body), nil
	}
	if !strings.HasPrefix(r.URL.Path, "/apis/metrics.k8s.io/v1beta1/namespaces/") || !strings.HasSuffix(r.URL.Path, "/pods") {
		if f.next != nil {
			return f.next.RoundTrip(r)
		}
		return respond(r, http.StatusNotFound, "text/plain; charset=utf-8", []byte("404 page not found\n")), nil
	}
	selector, err := labels.Parse(r.URL.Query().Get("labelSelector"))
	if err != nil {
		return respond(r, http.StatusBadRequest, "text/plain", []byte(err.Error())), nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, selector.String())
	list := podMetricsList{Items: []podMetrics{}}
	for _, pm := range f.pods {
		if selector.Matches(labels.Set(pm.Labels)) {
			list.Items = append(list.Items, pm)
		}
	}
	body, _ := json.Marshal(struct {
		Kind       string       `json:"kind"`
		APIVersion string       `json:"apiVersion"`
		Items      []podMetrics `json:"items"`
	}{"PodMetricsList", "metrics.k8s.io/v1beta1", list.Items})
	return respond(r, http.StatusOK, "application/json", body), nil
}

func respond(r *http.Request, code int, contentType string, body []byte) *http.Response {
	return &http.Response{StatusCode: code, Header: http.Header{"Content-Type": {contentType}}, Body: io.NopCloser(bytes.NewReader(body)), Request: r,
		ContentLength: int64(len(body))}
}
