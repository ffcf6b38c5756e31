package podsecurity

import (
	"github.com/prometheus/client_golang/prometheus"
	basemetrics "k8s.io/component-base/metrics"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"
)

// apiVersion is the Kubernetes release admitd serves: a policy version
// newer than it is counted as "future". (Upstream reads it from the
// binary's build information, which admitd's build does not set.)
var apiVersion = psapi.MajorMinorVersion(1, 37)

// newMetrics returns upstream's recorder (pod_security_evaluations_total,
// pod_security_exemptions_total and pod_security_errors_total, with their
// labels and help texts) registered with reg.
func newMetrics(reg prometheus.Registerer) (psmetrics.Recorder, error) {
	rec := psmetrics.NewPrometheusRecorder(apiVersion)
	var err error
	rec.MustRegister(func(cs ...basemetrics.Registerable) {
		for _, c := range cs {
			// component-base metrics are lazy: create them (no
			// deprecation or hiding applies) before a plain
			// registry can collect them.
			c.Create(nil)
			if err == nil {
				err = reg.Register(c)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// noRecorder records nothing.
type noRecorder struct{}

func (noRecorder) RecordEvaluation(psmetrics.Decision, psapi.LevelVersion, psmetrics.Mode, psapi.Attributes) {
}
func (noRecorder) RecordExemption(psapi.Attributes)           {}
func (noRecorder) RecordError(fatal bool, _ psapi.Attributes) {}
