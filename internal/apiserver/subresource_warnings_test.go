package apiserver

import (
	"slices"
	"testing"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// TestSubresourceWarnings: a status write warns by the status strategy (a
// pod's IPs), a scale write as the main resource (a Deployment's template,
// once the scale bumped the generation), and a write of the main resource
// does not give the status strategy's warnings.
func TestSubresourceWarnings(t *testing.T) {
	ts := newTestServer(t)
	const pods = "/api/v1/namespaces/default/pods"
	ts.must(201, "POST", pods, "", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	status := `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]},` +
		`"status":{"podIP":"2001:db8::1","podIPs":[{"ip":"2001:db8::1"}],"hostIP":"010.0.0.1","hostIPs":[{"ip":"010.0.0.1"}]}}`
	warnings := func(method, path, contentType, body string, code int) []string {
		t.Helper()
		w := ts.do(method, path, contentType, body)
		if w.Code != code {
			t.Fatalf("%s %s = %d %s, want %d", method, path, w.Code, w.Body, code)
		}
		parsed, _ := utilnet.ParseWarningHeaders(w.Result().Header.Values("Warning"))
		var texts []string
		for _, p := range parsed {
			texts = append(texts, p.Text)
		}
		return texts
	}
	want := []string{`status.hostIPs[0].ip: non-standard IP address "010.0.0.1" is invalid: use "10.0.0.1"`}
	if got := warnings("PUT", pods+"/p/status", "", status, 200); !slices.Equal(got, want) {
		t.Errorf("PUT pods/p/status warnings = %q, want %q", got, want)
	}
	if got := warnings("PUT", pods+"/p", "", status, 200); len(got) != 0 {
		t.Errorf("PUT pods/p with a status warnings = %q, want none", got)
	}

	const deployments = "/apis/apps/v1/namespaces/default/deployments"
	deployment := `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},` +
		`"spec":{"nodeSelector":{"beta.kubernetes.io/os":"linux"},"containers":[{"name":"c","image":"i"}]}}}}`
	want = []string{`spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`}
	if got := warnings("POST", deployments, "", deployment, 201); !slices.Equal(got, want) {
		t.Errorf("POST deployment warnings = %q, want %q", got, want)
	}
	scale := `{"spec":{"replicas":3}}`
	if got := warnings("PATCH", deployments+"/d/scale", "application/merge-patch+json", scale, 200); !slices.Equal(got, want) {
		t.Errorf("PATCH deployments/d/scale warnings = %q, want %q", got, want)
	}
	if got := warnings("PATCH", deployments+"/d/scale", "application/merge-patch+json", scale, 200); len(got) != 0 {
		t.Errorf("PATCH deployments/d/scale to the same count: warnings = %q, want none (the generation did not change)", got)
	}
}
