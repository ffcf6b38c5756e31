package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/flowcontrol"
)

// TestWriteEstimateCountsInterestedWatches: a write's final seats and
// their linger follow the watches its event may reach (its resource
// cluster-wide, its namespace, its name), as upstream's mutating work
// estimator: a seat per 10 watches, 5 ms each, at most 10 seats; a
// kubelet's pods watch of its node and a token request do not count.
func TestWriteEstimateCountsInterestedWatches(t *testing.T) {
	s := &Server{}
	watch := func(path string) func() {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		return s.watchCounts.register(r, parseRequestInfo(r))
	}
	estimate := func(method, path string) flowcontrol.Estimate {
		r := httptest.NewRequest(method, path, nil)
		return s.estimateWork(r, &request{info: parseRequestInfo(r)}, 0)
	}
	var forget []func()
	for i := 0; i < 15; i++ {
		forget = append(forget, watch("/api/v1/namespaces/a/configmaps?watch=1"))
		forget = append(forget, watch("/api/v1/configmaps?watch=1"))
		forget = append(forget, watch("/api/v1/namespaces/b/configmaps?watch=1"))
		forget = append(forget, watch("/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dn1"))
	}
	forget = append(forget, watch("/api/v1/namespaces/a/configmaps?watch=1&fieldSelector=metadata.name%3Dx"))
	for _, tc := range []struct {
		method, path string
		want         flowcontrol.Estimate
	}{
		{"POST", "/api/v1/namespaces/a/configmaps", flowcontrol.Estimate{Seats: 1, FinalSeats: 3, AdditionalLatency: 5 * time.Millisecond, Watchers: 30, WatchersCounted: true}},
		{"PUT", "/api/v1/namespaces/a/configmaps/x", flowcontrol.Estimate{Seats: 1, FinalSeats: 4, AdditionalLatency: 5 * time.Millisecond, Watchers: 31, WatchersCounted: true}},
		{"DELETE", "/api/v1/namespaces/c/configmaps/x", flowcontrol.Estimate{Seats: 1, FinalSeats: 2, AdditionalLatency: 5 * time.Millisecond, Watchers: 15, WatchersCounted: true}},
		{"POST", "/api/v1/namespaces/a/pods", flowcontrol.Estimate{Seats: 1, Watchers: 0, WatchersCounted: true}},
		{"POST", "/api/v1/namespaces/a/serviceaccounts/default/token", flowcontrol.Estimate{Seats: 1}},
		{"DELETE", "/api/v1/namespaces/a/configmaps", flowcontrol.Estimate{Seats: 1}}, // deletecollection
		{"GET", "/api/v1/namespaces/a/configmaps/x", flowcontrol.Estimate{Seats: 1}},
	} {
		if got := estimate(tc.method, tc.path); got != tc.want {
			t.Errorf("%s %s: %+v, want %+v", tc.method, tc.path, got, tc.want)
		}
	}
	for i := 0; i < 1000; i++ {
		forget = append(forget, watch("/api/v1/configmaps?watch=1"))
	}
	// 1,030 watches: 103 seats' worth of events, 515 seat-ms over 10 seats
	want := flowcontrol.Estimate{Seats: 1, FinalSeats: 10, AdditionalLatency: 51500 * time.Microsecond, Watchers: 1030, WatchersCounted: true}
	if got := estimate("POST", "/api/v1/namespaces/b/configmaps"); got != want {
		t.Errorf("with 1,030 watches: %+v, want %+v", got, want)
	}
	for _, f := range forget {
		f()
	}
	if len(s.watchCounts.counts) != 0 {
		t.Errorf("watches left counted: %v", s.watchCounts.counts)
	}
}

// TestListEstimate: a list upstream's watch cache would answer streams and
// holds at most 1 MB (10 seats); one read from storage (an exact
// revision, a continued list) holds what it reads; a named one, one object.
func TestListEstimate(t *testing.T) {
	s := &Server{}
	s.objectStats.observe("", "configmaps", 5000, 460, time.Now())
	for path, want := range map[string]int{
		"/api/v1/configmaps":                                               10,
		"/api/v1/configmaps?resourceVersion=0":                             10,
		"/api/v1/configmaps?limit=500":                                     3,
		"/api/v1/configmaps?limit=500&resourceVersion=42":                  3,
		"/api/v1/configmaps?resourceVersion=42&resourceVersionMatch=Exact": 23,
		"/api/v1/configmaps?labelSelector=a%3Db&limit=1000&resourceVersionMatch=Exact&resourceVersion=4":   12,
		"/api/v1/configmaps?fieldSelector=metadata.name%3Dx&resourceVersion=42&resourceVersionMatch=Exact": 1,
		"/api/v1/configmaps?watch=1":                    10,
		"/api/v1/configmaps?watch=1&resourceVersion=42": 1,
		"/apis/apps/v1/deployments":                     1, // count not known
	} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		if got := s.estimateWork(r, &request{info: parseRequestInfo(r)}, 0); got.Seats != want {
			t.Errorf("%s: %d seats, want %d", path, got.Seats, want)
		}
	}
}
