package controllers

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const testCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func (c *cluster) configMap(path string) (*corev1.ConfigMap, bool) {
	code, body := c.do("GET", path, "")
	if code != http.StatusOK {
		return nil, false
	}
	var cm corev1.ConfigMap
	if err := json.Unmarshal([]byte(body), &cm); err != nil {
		c.t.Fatal(err)
	}
	return &cm, true
}

// published reports whether the ConfigMap at path holds exactly the CA and
// the description.
func (c *cluster) published(path string) func() bool {
	return func() bool {
		cm, ok := c.configMap(path)
		return ok && len(cm.Data) == 1 && cm.Data["ca.crt"] == testCA &&
			cm.Annotations["kubernetes.io/description"] == rootCADescription
	}
}

// Every namespace gets kube-root-ca.crt; it comes back when deleted and is
// repaired when changed, keeping what else it carries; a terminating
// namespace does not get it back.
func TestRootCAPublisher(t *testing.T) {
	c := newCluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go NewRootCA(c.store, c.cat, c.client(RootCAUser), []byte(testCA), slog.New(slog.NewTextHandler(io.Discard, nil))).Run(ctx)

	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		c.eventually(ns+" has kube-root-ca.crt", c.published("/api/v1/namespaces/"+ns+"/configmaps/kube-root-ca.crt"))
	}
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"team"}}`)
	path := "/api/v1/namespaces/team/configmaps/kube-root-ca.crt"
	c.eventually("a new namespace has kube-root-ca.crt", c.published(path))

	c.must(http.StatusOK, "PATCH", path, `{"metadata":{"labels":{"keep":"me"},"annotations":{"kubernetes.io/description":null,"other":"x"}},"data":{"ca.crt":"changed","extra":"y"}}`)
	c.eventually("the changed ConfigMap is repaired", c.published(path))
	cm, _ := c.configMap(path)
	if cm.Labels["keep"] != "me" || cm.Annotations["other"] != "x" {
		t.Errorf("repaired ConfigMap has labels %v and annotations %v, want its own kept", cm.Labels, cm.Annotations)
	}

	c.must(http.StatusOK, "DELETE", path, "")
	c.eventually("the deleted ConfigMap is recreated", c.published(path))

	c.must(http.StatusCreated, "POST", "/api/v1/namespaces/team/configmaps", `{"metadata":{"name":"held","finalizers":["example.com/hold"]}}`)
	c.must(http.StatusOK, "DELETE", "/api/v1/namespaces/team", "")
	c.eventually("the namespace controller deletes kube-root-ca.crt", c.gone(path))
	c.must(http.StatusOK, "PATCH", "/api/v1/namespaces/team/configmaps/held", `{"metadata":{"finalizers":null}}`)
	c.eventually("the namespace is gone", c.gone("/api/v1/namespaces/team"))
	if _, ok := c.configMap(path); ok {
		t.Errorf("kube-root-ca.crt exists in a deleted namespace")
	}
}
