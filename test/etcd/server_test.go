package etcd_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/server"
	"github.com/admitd/admitd/test/etcd/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// startServer starts admitd over the etcd endpoints, as
// `admitd serve --etcd-servers=...` does.
func startServer(t testing.TB, endpoints []string, compaction time.Duration) (*rest.Config, kubernetes.Interface) {
	t.Helper()
	return startServerWith(t, endpoints, compaction, nil)
}

// startServerWith is startServer with the options changed by change (nil:
// none).
func startServerWith(t testing.TB, endpoints []string, compaction time.Duration, change func(*server.Options)) (*rest.Config, kubernetes.Interface) {
	t.Helper()
	o := server.DefaultOptions()
	o.DataDir, o.SecurePort, o.KubeconfigOut = t.TempDir(), 0, "-"
	o.Etcd.Servers = endpoints
	o.CompactionInterval = compaction
	if change != nil {
		change(&o)
	}
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("starting admitd on etcd: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	cfg := &rest.Config{Host: srv.URL, QPS: -1, TLSClientConfig: rest.TLSClientConfig{
		CAData: srv.CAPEM, CertData: srv.AdminCertPEM, KeyData: srv.AdminKeyPEM}}
	return cfg, kubernetes.NewForConfigOrDie(cfg)
}

// TestServerOnEtcd: objects written through admitd are in etcd under
// kube-apiserver's key, in protobuf, their resourceVersion is etcd's mod
// revision, and the
// server compacts etcd through compact_rev_key as kube-apiserver does.
func TestServerOnEtcd(t *testing.T) {
	c := etcdtest.Start(t, 1)
	_, client := startServer(t, c.Endpoints(), 300*time.Millisecond)
	ctx := t.Context()
	cms := client.CoreV1().ConfigMaps("default")
	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	raw := rawClient(t, c)
	resp, err := raw.Get(ctx, "/registry/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var modRev int64
	for _, kv := range resp.Kvs {
		if string(kv.Key) == configMapKey {
			modRev = kv.ModRevision
			if !strings.HasPrefix(string(kv.Value), "k8s\x00") {
				t.Errorf("%s stored as %q, want kube-apiserver's protobuf envelope", configMapKey, kv.Value)
			}
		}
	}
	if modRev == 0 {
		t.Fatalf("no %s in etcd; keys: %d", configMapKey, len(resp.Kvs))
	}
	if created.ResourceVersion != strconv.FormatInt(modRev, 10) {
		t.Errorf("resourceVersion %s, etcd mod revision %d", created.ResourceVersion, modRev)
	}
	created.Data["k"] = "w"
	if _, err := cms.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	created.Data["k"] = "stale"
	if _, err := cms.Update(ctx, created, metav1.UpdateOptions{}); err == nil {
		t.Errorf("update at a stale resourceVersion succeeded")
	}
	waitCompacted(t, raw, modRev)
}

// waitCompacted waits until etcd is compacted past rev and
// compact_rev_key has been written.
func waitCompacted(t *testing.T, raw *clientv3.Client, rev int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		_, err := raw.Get(t.Context(), "x", clientv3.WithRev(rev))
		key, _ := raw.Get(t.Context(), "compact_rev_key")
		if err != nil && len(key.Kvs) == 1 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("etcd not compacted past revision %d within 10s", rev)
}

func rawClient(t *testing.T, c *etcdtest.Cluster) *clientv3.Client {
	t.Helper()
	raw, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

const configMapKey = "/registry/configmaps/default/a"

// TestCustomResourceOnEtcd: a CRD (stored in protobuf, as upstream) and
// its custom resources (JSON) round-trip through admitd on etcd.
func TestCustomResourceOnEtcd(t *testing.T) {
	c := etcdtest.Start(t, 1)
	cfg, _ := startServer(t, c.Endpoints(), 0)
	d := dynamic.NewForConfigOrDie(cfg)
	create(t, d, schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, "", crontabCRD)
	gvr := schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}
	waitServed(t, d, gvr)
	made := create(t, d, gvr, "default", `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"x"},"spec":{"cronSpec":"* * * * *"}}`)
	got, err := d.Resource(gvr).Namespace("default").Get(t.Context(), "x", metav1.GetOptions{})
	if err != nil || got.GetResourceVersion() != made.GetResourceVersion() {
		t.Fatalf("get = %v, %v", got, err)
	}
	raw := rawClient(t, c)
	for key, wantJSON := range map[string]bool{
		"/registry/apiextensions.k8s.io/customresourcedefinitions/crontabs.stable.example.com": false,
		"/registry/stable.example.com/crontabs/default/x":                                      true,
	} {
		resp, err := raw.Get(t.Context(), key)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("etcd get %s: %v", key, err)
		}
		if isJSON := resp.Kvs[0].Value[0] == '{'; isJSON != wantJSON {
			t.Errorf("%s stored as %.20q; want JSON %v", key, resp.Kvs[0].Value, wantJSON)
		}
	}
}
