package apiserver

import (
	"net/http"
	"slices"
	"strings"
)

// RequestLabels are the labels kube-apiserver gives a request in its
// apiserver_request_total and apiserver_request_duration_seconds series
// (the code label apart).
type RequestLabels struct {
	Verb, DryRun, Group, Version, Resource, Subresource, Scope, Component string
}

// requestComponent is the component label of requests served by the API
// handlers.
const requestComponent = "apiserver"

// RequestMetricLabels are r's labels as upstream's instrumented routes
// compute them. It is what the server records; exported for the
// differential test against upstream.
func RequestMetricLabels(r *http.Request) RequestLabels {
	return requestMetricLabels(r, parseRequestInfo(r))
}

func requestMetricLabels(r *http.Request, info *requestInfo) RequestLabels {
	if !info.IsResource {
		// Upstream meters the health endpoints only (with the path as
		// subresource and no scope or component).
		return RequestLabels{Verb: metricVerb(r, info, "", false), DryRun: metricDryRun(r), Subresource: info.Path}
	}
	scope := metricScope(r, info)
	return RequestLabels{Verb: metricVerb(r, info, scope, info.WatchPath), DryRun: metricDryRun(r), Group: info.Group, Version: info.Version,
		Resource: info.Resource, Subresource: info.Subresource, Scope: scope, Component: requestComponent}
}

// SelfRequestUser is the user of the server's own loopback requests, which
// upstream counts in apiserver_selfrequest_total (by name alone).
const SelfRequestUser = "system:apiserver"

// finishedKind says which of the optional series a finished request of
// user counts in.
func finishedKind(r *http.Request, info *requestInfo, user string) requestKind {
	return requestKind{SLI: info.Verb != "watch" && metricDryRun(r) == "", Sized: sizedRoute(r, info), Self: user == SelfRequestUser}
}

// sizedRoute says whether upstream records the size of r's response: on
// its GET and LIST routes (an object, a subresource but a connect one or
// pods/log, a collection, a watch of one by parameter) and on the health
// endpoints, which it installs as GET; not on a watch by the deprecated
// /watch/ path nor on a HEAD, which it routes as neither.
func sizedRoute(r *http.Request, info *requestInfo) bool {
	if !info.IsResource {
		return true
	}
	return strings.EqualFold(r.Method, http.MethodGet) && !info.WatchPath && !connectMetricSubresources[info.Subresource]
}

// metricScope is the scope upstream's installer gives a route: resource
// for a named object or a create, namespace for a collection in a
// namespace, cluster otherwise. A name in a field selector does not count.
func metricScope(r *http.Request, info *requestInfo) string {
	switch {
	case info.Name != "" || r.Method == http.MethodPost:
		return "resource"
	case info.Namespace != "":
		return "namespace"
	}
	return "cluster"
}

// droppedRequestLabels are the labels upstream gives a request its flow
// control or in-flight limit refuses, from the request info alone: the
// scope and verb of the long-running gauge, with the dry run; a
// non-resource request has neither path nor scope.
func droppedRequestLabels(r *http.Request, info *requestInfo) RequestLabels {
	l := longRunningMetricLabels(r, info)
	l.DryRun = metricDryRun(r)
	if !info.IsResource {
		l.Subresource = ""
	}
	return l
}

// longRunningMetricLabels are the labels of apiserver_longrunning_requests
// as upstream computes them from the request info: a name in a field
// selector makes the scope resource and the deprecated /watch/ path is not
// looked at (a watch of it is a LIST or GET).
func longRunningMetricLabels(r *http.Request, info *requestInfo) RequestLabels {
	if !info.IsResource {
		return RequestLabels{Verb: metricVerb(r, info, "", false), Subresource: info.Path, Component: requestComponent}
	}
	scope := "cluster"
	switch {
	case info.objectName() != "" || info.Verb == "create":
		scope = "resource"
	case info.Namespace != "":
		scope = "namespace"
	}
	return RequestLabels{Verb: metricVerb(r, info, scope, false), Group: info.Group, Version: info.Version,
		Resource: info.Resource, Subresource: info.Subresource, Scope: scope, Component: requestComponent}
}

// connectMetricSubresources are the subresources upstream reports as
// CONNECT.
var connectMetricSubresources = map[string]bool{"log": true, "exec": true, "portforward": true, "attach": true, "proxy": true}

// metricVerbs are the verbs upstream reports; any other is "other".
var metricVerbs = []string{"APPLY", "CONNECT", "CREATE", "DELETE", "DELETECOLLECTION", "GET", "LIST", "PATCH", "POST",
	"PROXY", "PUT", "UPDATE", "WATCH", "WATCHLIST"}

// metricVerb is the verb label: the upper-case method, GET of a
// collection as LIST, a watch (by parameter or the deprecated /watch/
// path) as WATCH, a patch of apply content type as APPLY and the
// streaming subresources as CONNECT.
func metricVerb(r *http.Request, info *requestInfo, scope string, watchPath bool) string {
	method := strings.ToUpper(r.Method)
	if watchPath {
		return "WATCH"
	}
	verb := method
	if (method == http.MethodGet || method == http.MethodHead) && scope != "resource" && scope != "" {
		verb = "LIST"
	} else if method == http.MethodHead {
		verb = http.MethodGet
	}
	if method == http.MethodGet && metricWatchParam(r) {
		verb = "WATCH"
	}
	if method == http.MethodPatch && r.Header.Get("Content-Type") == "application/apply-patch+yaml" {
		verb = "APPLY"
	}
	if info.IsResource && connectMetricSubresources[info.Subresource] {
		verb = "CONNECT"
	}
	if !slices.Contains(metricVerbs, verb) {
		return "other"
	}
	return verb
}

// metricWatchParam reads the first watch parameter as upstream's metrics
// do: present and, lower-cased, neither "0" nor "false".
func metricWatchParam(r *http.Request) bool {
	if !strings.Contains(r.URL.RawQuery, "watch") {
		return false
	}
	vals := r.URL.Query()["watch"]
	return len(vals) > 0 && vals[0] != "0" && !strings.EqualFold(vals[0], "false")
}

// metricDryRun is the dry_run label: "" without the parameter, else its
// distinct values sorted and joined by commas, or "invalid" when one is
// not "All".
func metricDryRun(r *http.Request) string {
	if !strings.Contains(r.URL.RawQuery, "dryRun") {
		return ""
	}
	vals := r.URL.Query()["dryRun"]
	for _, v := range vals {
		if v != "All" {
			return "invalid"
		}
	}
	if len(vals) == 0 {
		return ""
	}
	return "All"
}

// DroppedRequestMetricLabels are r's labels when flow control refuses it;
// exported for the differential test against upstream.
func DroppedRequestMetricLabels(r *http.Request) RequestLabels {
	return droppedRequestLabels(r, parseRequestInfo(r))
}

// LongRunningMetricLabels are r's labels in apiserver_longrunning_requests
// (DryRun is always empty); exported for the differential test against
// upstream.
func LongRunningMetricLabels(r *http.Request) RequestLabels {
	return longRunningMetricLabels(r, parseRequestInfo(r))
}
