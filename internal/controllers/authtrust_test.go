package controllers

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/internal/pki"
)

// TestClusterAuthenticationTrust: the ConfigMap gets this server's client
// and front-proxy CAs and headers added to what another server published
// (CAs and names without repeats), with upstream's keys and JSON lists.
func TestClusterAuthenticationTrust(t *testing.T) {
	c := newCluster(t)
	caA, _ := pki.NewCA("client-a")
	caB, _ := pki.NewCA("client-b")
	proxyCA, _ := pki.NewCA("front-proxy")
	other := corev1.ConfigMap{Data: map[string]string{"client-ca-file": string(caA.CertPEM), "requestheader-client-ca-file": string(proxyCA.CertPEM),
		"requestheader-allowed-names": `["aggregator"]`, "requestheader-username-headers": `["X-Remote-User"]`,
		"requestheader-group-headers": `["X-Remote-Group"]`, "requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`}}
	other.Name = AuthenticationConfigMap
	body, _ := json.Marshal(other)
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces/kube-system/configmaps", string(body))

	ctl, err := NewClusterAuthenticationTrust(roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		return c.api.Loopback(apiserverTestUser).RoundTrip(r)
	}), AuthenticationInfo{ClientCA: append(append([]byte{}, caA.CertPEM...), caB.CertPEM...), RequestHeaderCA: proxyCA.CertPEM,
		AllowedNames: []string{"front-proxy-client"}, UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{"X-Remote-Group"},
		ExtraHeaderPrefixes: []string{"X-Remote-Extra-"}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	cm, ok := c.configMap("/api/v1/namespaces/kube-system/configmaps/" + AuthenticationConfigMap)
	want := map[string]string{"client-ca-file": string(caA.CertPEM) + string(caB.CertPEM), "requestheader-client-ca-file": string(proxyCA.CertPEM),
		"requestheader-allowed-names": `["aggregator","front-proxy-client"]`, "requestheader-username-headers": `["X-Remote-User"]`,
		"requestheader-group-headers": `["X-Remote-Group"]`, "requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`}
	if !ok || len(cm.Data) != len(want) {
		t.Fatalf("ConfigMap data = %v, want %v", cm, want)
	}
	for k, v := range want {
		if cm.Data[k] != v {
			t.Errorf("data[%s] = %q, want %q", k, cm.Data[k], v)
		}
	}
	rv := cm.ResourceVersion
	if err := ctl.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if again, _ := c.configMap("/api/v1/namespaces/kube-system/configmaps/" + AuthenticationConfigMap); again.ResourceVersion != rv {
		t.Errorf("a sync without changes wrote the ConfigMap (resourceVersion %s -> %s)", rv, again.ResourceVersion)
	}
}
