// Package requestmetrics compares the labels admitd gives each request in
// kube-apiserver's per-request series (apiserver_request_total,
// apiserver_request_duration_seconds, apiserver_longrunning_requests) with
// the ones upstream's k8s.io/apiserver/pkg/endpoints/metrics records for
// the same request, and the series' help texts and buckets.
package requestmetrics
