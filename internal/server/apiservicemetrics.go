package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// unavailableAPIServiceDesc is kube-aggregator's
// aggregator_unavailable_apiservice.
var unavailableAPIServiceDesc = prometheus.NewDesc("aggregator_unavailable_apiservice",
	"[ALPHA] Gauge of APIServices which are marked as unavailable broken down by APIService name.", []string{"name"}, nil)

// apiServiceAvailability reports, when /metrics is scraped, each stored
// APIService as unavailable (1) unless its Available condition is True:
// the condition the availability controller keeps, which upstream's gauge
// follows.
type apiServiceAvailability struct {
	store storage.Store
	cat   *registry.Catalogue
}

func (a apiServiceAvailability) Describe(ch chan<- *prometheus.Desc) { ch <- unavailableAPIServiceDesc }

// Collect sends nothing when the APIServices cannot be read within a
// second.
func (a apiServiceAvailability) Collect(ch chan<- prometheus.Metric) {
	res, ok := a.cat.Lookup(apiServicesGVR)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, objs, err := layout.List(ctx, a.store, res, 0)
	if err != nil {
		return
	}
	for _, obj := range objs {
		svc, ok := obj.(*apiregistrationv1.APIService)
		if !ok {
			continue
		}
		ch <- prometheus.MustNewConstMetric(unavailableAPIServiceDesc, prometheus.GaugeValue, unavailable(svc), svc.Name)
	}
}

func unavailable(svc *apiregistrationv1.APIService) float64 {
	for _, c := range svc.Status.Conditions {
		if c.Type == apiregistrationv1.Available && c.Status == apiregistrationv1.ConditionTrue {
			return 0
		}
	}
	return 1
}
