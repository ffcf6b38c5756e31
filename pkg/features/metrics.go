package features

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// RegisterMetrics registers kube-apiserver's kubernetes_feature_enabled with
// reg: one series per gate available in 1.37 (none of the pre-alpha ones),
// labelled with its name and stage ("ALPHA", "BETA", "DEPRECATED", "" when
// GA), of value 1 when g has it on and 0 when off. The series are built at
// the first scrape, not at start (reading every gate takes milliseconds),
// and kept: the gates do not change after start.
func (g *Gates) RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(&enabledCollector{gates: g, desc: prometheus.NewDesc("kubernetes_feature_enabled",
		"[BETA] This metric records the data about the stage and enablement of a k8s feature.", []string{"name", "stage"}, nil)})
}

// enabledCollector serves kubernetes_feature_enabled.
type enabledCollector struct {
	gates  *Gates
	desc   *prometheus.Desc
	once   sync.Once
	series []prometheus.Metric
}

func (c *enabledCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *enabledCollector) Collect(ch chan<- prometheus.Metric) {
	c.once.Do(func() {
		for name, spec := range c.gates.fg.GetAll() {
			value := 0.0
			if c.gates.fg.Enabled(name) {
				value = 1
			}
			c.series = append(c.series, prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, value, string(name), string(spec.PreRelease)))
		}
	})
	for _, m := range c.series {
		ch <- m
	}
}
