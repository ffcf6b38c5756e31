package features

import "github.com/prometheus/client_golang/prometheus"

// RegisterMetrics registers kube-apiserver's kubernetes_feature_enabled with
// reg: one series per gate available in 1.37 (none of the pre-alpha ones),
// labelled with its name and stage ("ALPHA", "BETA", "DEPRECATED", "" when
// GA), of value 1 when g has it on and 0 when off. The gates are read once:
// they do not change after start.
func (g *Gates) RegisterMetrics(reg prometheus.Registerer) {
	enabled := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubernetes_feature_enabled",
		Help: "[BETA] This metric records the data about the stage and enablement of a k8s feature."},
		[]string{"name", "stage"})
	for name, spec := range g.fg.GetAll() {
		value := 0.0
		if g.fg.Enabled(name) {
			value = 1
		}
		enabled.WithLabelValues(string(name), string(spec.PreRelease)).Set(value)
	}
	reg.MustRegister(enabled)
}
