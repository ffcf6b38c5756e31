package audit

import (
	"io"
	"testing"
	"time"
)

func BenchmarkEvaluate(b *testing.B) {
	p, err := ParsePolicy([]byte(header + `omitStages: [RequestReceived]
rules:
- level: None
  users: [system:kube-proxy]
  verbs: [watch]
- level: None
  nonResourceURLs: [/healthz*, /version, /readyz, /livez]
- level: Metadata
  resources: [{group: "", resources: [secrets, configmaps]}]
- level: Request
  verbs: [get, list, watch]
- level: RequestResponse
`))
	if err != nil {
		b.Fatal(err)
	}
	a := Attributes{User: "admin", Groups: []string{"system:masters"}, Verb: "create", ResourceRequest: true,
		APIGroup: "apps", Resource: "deployments", Namespace: "ns", Name: "d"}
	b.ReportAllocs()
	for b.Loop() {
		if p.Evaluate(a).Level != LevelRequestResponse {
			b.Fatal("wrong level")
		}
	}
}

func BenchmarkWriteEvent(b *testing.B) {
	w := NewStreamWriter(io.Discard)
	r := &Request{AuditID: "7d6f1c2e-0000-4000-8000-000000000001", ReceivedAt: time.Now(), FinishedAt: time.Now(),
		RequestURI: "/api/v1/namespaces/ns/configmaps", Verb: "create", SourceIPs: []string{"127.0.0.1"},
		Resource:       &ObjectReference{Resource: "configmaps", Namespace: "ns", APIVersion: "v1"},
		RequestObject:  []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm","namespace":"ns"},"data":{"k":"v"}}`),
		ResponseObject: []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm","namespace":"ns","uid":"u","resourceVersion":"1"},"data":{"k":"v"}}`),
		ResponseStatus: &ResponseStatus{Code: 201}}
	rc := RequestConfig{Level: LevelRequestResponse}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.WriteEvent(NewEvent(r, rc, StageResponseComplete)); err != nil {
			b.Fatal(err)
		}
	}
}
