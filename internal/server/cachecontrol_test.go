package server

import (
	"crypto/tls"
	"net/http"
	"testing"

	"k8s.io/client-go/rest"
)

// Every answer says it is not to be cached, as kube-apiserver's
// (WithCacheControl: "no-cache, private" unless the handler says
// otherwise): objects, errors, refusals of unauthenticated clients,
// health and version; the hashed OpenAPI v3 documents keep their own.
func TestAnswersAreNotCached(t *testing.T) {
	_, admin := startWith(t, testOptions(t))
	client, err := rest.HTTPClientFor(admin)
	if err != nil {
		t.Fatal(err)
	}
	anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test's own server
	get := func(c *http.Client, path string) *http.Response {
		t.Helper()
		resp, err := c.Get(admin.Host + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, tc := range []struct {
		client *http.Client
		path   string
		code   int
	}{
		{client, "/api/v1/namespaces/default", 200},
		{client, "/api/v1/namespaces/missing", 404},
		{client, "/api/v1/namespaces?watch=true&timeoutSeconds=1", 200},
		{client, "/healthz", 200},
		{client, "/version", 200},
		{anonymous, "/api/v1/namespaces", 401},
	} {
		resp := get(tc.client, tc.path)
		if resp.StatusCode != tc.code || resp.Header.Get("Cache-Control") != "no-cache, private" {
			t.Errorf("GET %s = %d, Cache-Control %q; want %d, \"no-cache, private\"", tc.path, resp.StatusCode, resp.Header.Get("Cache-Control"), tc.code)
		}
	}
}
