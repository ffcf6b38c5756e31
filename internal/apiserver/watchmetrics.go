package apiserver

import "github.com/prometheus/client_golang/prometheus"

// TerminatedWatchers registers upstream's apiserver_terminated_watchers_total
// with reg and returns what counts a watch ended because its client did
// not keep up (Config.OnWatcherTerminated).
func TerminatedWatchers(reg prometheus.Registerer) func(group, resource string) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_terminated_watchers_total",
		Help: "[ALPHA] Counter of watchers closed due to unresponsiveness broken by resource type."}, []string{"group", "resource"})
	reg.MustRegister(c)
	return func(group, resource string) { c.WithLabelValues(group, resource).Inc() }
}
