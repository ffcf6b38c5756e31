// Package requestmetrics compares admitd's per-request series with
// upstream's k8s.io/apiserver/pkg/endpoints/metrics: the labels admitd
// gives each request in apiserver_request_total,
// apiserver_request_duration_seconds, apiserver_longrunning_requests and
// apiserver_request_terminations_total; the values a set of finished
// requests leaves in those and in apiserver_request_sli_duration_seconds,
// apiserver_response_sizes and apiserver_selfrequest_total, as
// MonitorRequest records them with latency trackers; the series' help
// texts, types and buckets; and the help texts and label names of every
// family admitd registers under a name upstream's packages register.
package requestmetrics
