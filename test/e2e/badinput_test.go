package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

type status struct {
	Kind    string `json:"kind"`
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func TestBadInputGetsUpstreamStatus(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	c := a.HTTPClient(t)
	big := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"` + strings.Repeat("x", 3*1024*1024+10) + `"}}`
	cases := []struct {
		name, method, path, contentType, body string
		code                                  int
		reason, message                       string
	}{
		{"malformed json", "POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":`, 400, "BadRequest", ""},
		{"wrong kind for url", "POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"}}`, 400, "BadRequest", `Deployment in version "v1" cannot be handled as a ConfigMap: converting (v1.Deployment) to (core.ConfigMap): unknown conversion`},
		{"body too large", "POST", "/api/v1/namespaces/default/configmaps", "application/json", big, 413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728"},
		{"unknown resource", "GET", "/api/v1/namespaces/default/widgets", "", "", 404, "NotFound", "the server could not find the requested resource"},
		{"namespace mismatch", "POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"other"}}`, 400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request"},
		{"unsupported media type", "POST", "/api/v1/namespaces/default/configmaps", "text/plain", `hello`, 415, "UnsupportedMediaType", ""},
		{"missing object", "GET", "/api/v1/namespaces/default/configmaps/nope", "", "", 404, "NotFound", `configmaps "nope" not found`},
		{"invalid name", "POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}`, 422, "Invalid", `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"`},
		{"method not allowed", "PUT", "/api/v1/namespaces/default/configmaps", "application/json", `{}`, 405, "MethodNotAllowed", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, a.URL+tc.path, bytes.NewBufferString(tc.body))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			var st status
			if err := json.Unmarshal(data, &st); err != nil {
				t.Fatalf("response is not a Status: %s", data)
			}
			if resp.StatusCode != tc.code || st.Code != tc.code || st.Kind != "Status" || st.Reason != tc.reason {
				t.Fatalf("%s %s = %d %s/%d/%s, want %d %s", tc.method, tc.path, resp.StatusCode, st.Kind, st.Code, st.Reason, tc.code, tc.reason)
			}
			if !strings.Contains(st.Message, tc.message) {
				t.Fatalf("message = %q, want it to contain %q", st.Message, tc.message)
			}
		})
	}
	// nothing was stored by the failed creates (kube-root-ca.crt is the
	// root CA publisher's, as in every namespace)
	out := a.MustKubectl(t, "", "get", "configmaps", "-n", "default", "-o", "name")
	if out = strings.TrimSpace(strings.ReplaceAll(out, "configmap/kube-root-ca.crt\n", "")); out != "" {
		t.Fatalf("failed creates stored objects: %q", out)
	}
}

func TestUnauthenticatedGets401(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	cfg := a.RestConfig(t)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CAData)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get(a.URL + "/api/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous GET = %d, want 401", resp.StatusCode)
	}
}
