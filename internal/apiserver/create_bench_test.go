package apiserver

import (
	"fmt"
	"testing"
)

// BenchmarkCreateConfigMap is one create through ServeHTTP (request
// parsing, the deadline, authentication of the test user, admission with
// no plugins, storage in memory, the response): the request path's own
// cost, without TLS, HTTP/2 or a client.
func BenchmarkCreateConfigMap(b *testing.B) {
	ts := newTestServer(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%d"},"data":{"a":"b"}}`, i)
		if w := ts.do("POST", cmPath, "application/json", body); w.Code != 201 {
			b.Fatalf("create = %d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkCreateConfigMapVaried is BenchmarkCreateConfigMap with a label
// value and a data value of its own in each config map, as real config
// maps (and events) differ from one another.
func BenchmarkCreateConfigMapVaried(b *testing.B) {
	ts := newTestServer(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%d","labels":{"run":"r%d"}},"data":{"a":"b%d"}}`, i, i, i)
		if w := ts.do("POST", cmPath, "application/json", body); w.Code != 201 {
			b.Fatalf("create = %d %s", w.Code, w.Body)
		}
	}
}
