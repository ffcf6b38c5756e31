package pvbinder

import (
	"errors"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// Metrics are upstream's pv_collector families (counted from the
// controller's caches at each scrape) and its retroactive_storageclass
// counters (pkg/controller/volume/persistentvolume/metrics), with their
// names, labels and help texts. They outlive a controller: the latest one
// made with them is the one counted.
type Metrics struct {
	source                      atomic.Pointer[Controller]
	totalPV, boundPV, unboundPV *prometheus.Desc
	boundPVC, unboundPVC        *prometheus.Desc
	retroactive, retroErrors    prometheus.Counter
}

// NewMetrics returns the families, not yet served.
func NewMetrics() *Metrics {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("pv_collector_"+name, "[ALPHA] "+help, labels, nil)
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: "[ALPHA] " + help})
	}
	return &Metrics{
		totalPV:     desc("total_pv_count", "Gauge measuring total number of persistent volumes", "plugin_name", "volume_mode"),
		boundPV:     desc("bound_pv_count", "Gauge measuring number of persistent volume currently bound", "storage_class"),
		unboundPV:   desc("unbound_pv_count", "Gauge measuring number of persistent volume currently unbound", "storage_class"),
		boundPVC:    desc("bound_pvc_count", "Gauge measuring number of persistent volume claim currently bound", "namespace", "storage_class", "volume_attributes_class"),
		unboundPVC:  desc("unbound_pvc_count", "Gauge measuring number of persistent volume claim currently unbound", "namespace", "storage_class", "volume_attributes_class"),
		retroactive: counter("retroactive_storageclass_total", "Total number of retroactive StorageClass assignments to persistent volume claim"),
		retroErrors: counter("retroactive_storageclass_errors_total", "Total number of failed retroactive StorageClass assignments to persistent volume claim"),
	}
}

// Register serves the families on reg; registering them again is not an
// error.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{countCollector{m}, m.retroactive, m.retroErrors} {
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}

// retroactiveAssignment counts an assignment of the default class, and
// its failure.
func (m *Metrics) retroactiveAssignment(failed bool) {
	if m == nil {
		return
	}
	m.retroactive.Inc()
	if failed {
		m.retroErrors.Inc()
	}
}

// countCollector counts the volumes and claims of the controller's caches.
type countCollector struct{ m *Metrics }

func (cc countCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cc.m.totalPV, cc.m.boundPV, cc.m.unboundPV, cc.m.boundPVC, cc.m.unboundPVC} {
		ch <- d
	}
}

func (cc countCollector) Collect(ch chan<- prometheus.Metric) {
	c := cc.m.source.Load()
	if c == nil {
		return
	}
	cc.collectVolumes(ch, c.volumes.ListAll(all[*corev1.PersistentVolume]))
	cc.collectClaims(ch, c.claims.ListAll(all[*corev1.PersistentVolumeClaim]))
}

type pluginMode struct{ plugin, mode string }

func (cc countCollector) collectVolumes(ch chan<- prometheus.Metric, volumes []*corev1.PersistentVolume) {
	total := map[pluginMode]int{}
	bound, unbound := map[string]int{}, map[string]int{}
	for _, v := range volumes {
		total[pluginMode{metricPluginName(v), string(ptr.Deref(v.Spec.VolumeMode, corev1.PersistentVolumeFilesystem))}]++
		if v.Status.Phase == corev1.VolumeBound {
			bound[v.Spec.StorageClassName]++
		} else {
			unbound[v.Spec.StorageClassName]++
		}
	}
	for k, n := range total {
		ch <- prometheus.MustNewConstMetric(cc.m.totalPV, prometheus.GaugeValue, float64(n), k.plugin, k.mode)
	}
	for class, n := range bound {
		ch <- prometheus.MustNewConstMetric(cc.m.boundPV, prometheus.GaugeValue, float64(n), class)
	}
	for class, n := range unbound {
		ch <- prometheus.MustNewConstMetric(cc.m.unboundPV, prometheus.GaugeValue, float64(n), class)
	}
}

// metricPluginName is the plugin_name of a volume: that of the binder's
// plugin supporting it (host path or NFS), N/A for the others.
func metricPluginName(v *corev1.PersistentVolume) string {
	switch {
	case v.Spec.HostPath != nil:
		return hostPathPlugin
	case v.Spec.NFS != nil:
		return "kubernetes.io/nfs"
	}
	return "N/A"
}

type claimDimensions struct{ namespace, class, attributesClass string }

func (cc countCollector) collectClaims(ch chan<- prometheus.Metric, claims []*corev1.PersistentVolumeClaim) {
	bound, unbound := map[claimDimensions]int{}, map[claimDimensions]int{}
	for _, pvc := range claims {
		d := claimDimensions{pvc.Namespace, storagehelpers.GetPersistentVolumeClaimClass(pvc), ptr.Deref(pvc.Spec.VolumeAttributesClassName, "")}
		if pvc.Status.Phase == corev1.ClaimBound {
			bound[d]++
		} else {
			unbound[d]++
		}
	}
	for d, n := range bound {
		ch <- prometheus.MustNewConstMetric(cc.m.boundPVC, prometheus.GaugeValue, float64(n), d.namespace, d.class, d.attributesClass)
	}
	for d, n := range unbound {
		ch <- prometheus.MustNewConstMetric(cc.m.unboundPVC, prometheus.GaugeValue, float64(n), d.namespace, d.class, d.attributesClass)
	}
}
