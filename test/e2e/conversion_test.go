package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/admitd/admitd/pkg/webhook"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// Kind Backend of net.example.com: v1 (spec.host and spec.port, stored)
// converts through the hub v2 (spec.address), in a conversion webhook
// written with pkg/webhook.
type backendV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Host string `json:"host"`
		Port int64  `json:"port"`
	} `json:"spec"`
}

type backendV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Address string `json:"address"`
	} `json:"spec"`
}

func (b *backendV1) DeepCopyObject() runtime.Object {
	c := *b
	b.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

func (b *backendV2) DeepCopyObject() runtime.Object {
	c := *b
	b.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

func (*backendV2) Hub() {}

func (b *backendV1) ConvertTo(dst webhook.Hub) error {
	hub := dst.(*backendV2)
	hub.ObjectMeta = b.ObjectMeta
	hub.Spec.Address = net.JoinHostPort(b.Spec.Host, strconv.FormatInt(b.Spec.Port, 10))
	return nil
}

func (b *backendV1) ConvertFrom(src webhook.Hub) error {
	hub := src.(*backendV2)
	host, port, err := net.SplitHostPort(hub.Spec.Address)
	if err != nil {
		return err
	}
	b.ObjectMeta, b.Spec.Host = hub.ObjectMeta, host
	b.Spec.Port, err = strconv.ParseInt(port, 10, 64)
	return err
}

var (
	backendsV1 = schema.GroupVersionResource{Group: "net.example.com", Version: "v1", Resource: "backends"}
	backendsV2 = schema.GroupVersionResource{Group: "net.example.com", Version: "v2", Resource: "backends"}
)

func backendConversionWebhook(t *testing.T) *webhooktest.Server {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(backendsV1.GroupVersion().WithKind("Backend"), &backendV1{})
	scheme.AddKnownTypeWithName(backendsV2.GroupVersion().WithKind("Backend"), &backendV2{})
	mux := http.NewServeMux()
	mux.Handle("/convert", webhook.ServeConversion(webhook.SchemeConverter(scheme)))
	return webhooktest.Start(t, mux)
}

func backendCRD(url string, caBundle []byte) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backends.net.example.com
spec:
  group: net.example.com
  scope: Namespaced
  names: {kind: Backend, plural: backends, singular: backend, listKind: BackendList}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: %q, caBundle: %s}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {host: {type: string}, port: {type: integer}}}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {address: {type: string}}}
`, url, base64.StdEncoding.EncodeToString(caBundle))
}

// TestConversionWebhookUnderKubectlInformersAndWatch converts Backends
// between v1 and v2 through a conversion webhook written with
// pkg/webhook: kubectl reads and writes both versions, dynamic informers
// of both versions and a v2 watch see converted objects, and with the
// webhook down reads that need conversion fail with upstream's message
// while reads that do not still work.
func TestConversionWebhookUnderKubectlInformersAndWatch(t *testing.T) {
	t.Parallel()
	hook := backendConversionWebhook(t)
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, backendCRD(hook.URL+"/convert", hook.CABundle()), "apply", "-f", "-")
	dyn := dynamic.NewForConfigOrDie(a.RestConfig(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := watchBackends(t, ctx, dyn)
	w, err := dyn.Resource(backendsV2).Namespace("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	a.MustKubectl(t, "apiVersion: net.example.com/v1\nkind: Backend\nmetadata: {name: db}\nspec: {host: db.local, port: 5432}\n", "apply", "-f", "-")
	a.MustKubectl(t, "apiVersion: net.example.com/v2\nkind: Backend\nmetadata: {name: cache}\nspec: {address: 'cache.local:6379'}\n", "apply", "-f", "-")
	if got := a.MustKubectl(t, "", "get", "backends.v2.net.example.com", "db", "-o", "jsonpath={.apiVersion} {.spec.address}"); got != "net.example.com/v2 db.local:5432" {
		t.Errorf("kubectl get v2 db = %q", got)
	}
	if got := a.MustKubectl(t, "", "get", "backends.v1.net.example.com", "cache", "-o", "jsonpath={.spec.host} {.spec.port}"); got != "cache.local 6379" {
		t.Errorf("kubectl get v1 cache = %q", got)
	}
	if got := a.MustKubectl(t, "", "get", "backends.v2.net.example.com", "-o", "jsonpath={.items[*].spec.address}"); got != "cache.local:6379 db.local:5432" {
		t.Errorf("kubectl get v2 list = %q", got)
	}
	seen.wait(t, map[string]string{"v1/db": "db.local:5432", "v1/cache": "cache.local:6379", "v2/db": "db.local:5432", "v2/cache": "cache.local:6379"})
	wantWatched(t, w, map[string]string{"db": "db.local:5432", "cache": "cache.local:6379"})

	hook.Close()
	_, errOut, err := a.Kubectl(t, "", "get", "backends.v2.net.example.com", "db")
	want := `conversion webhook for net.example.com/v1, Kind=Backend failed: Post "` + hook.URL + `/convert?timeout=30s": dial tcp`
	if err == nil || !strings.Contains(errOut, want) {
		t.Errorf("v2 get with the webhook down: %v %s\nwant %s", err, errOut, want)
	}
	if _, errOut, err := a.Kubectl(t, "", "get", "backends.v2.net.example.com"); err == nil || !strings.Contains(errOut, "conversion webhook for net.example.com/v1, Kind=Backend failed") {
		t.Errorf("v2 list with the webhook down: %v %s", err, errOut)
	}
	if got := a.MustKubectl(t, "", "get", "backends.v1.net.example.com", "db", "-o", "jsonpath={.spec.host}"); got != "db.local" {
		t.Errorf("v1 get with the webhook down = %q", got)
	}
}

// backendsSeen is what informers of both versions hold: "<version>/<name>"
// to the address the object says.
type backendsSeen struct {
	mu  sync.Mutex
	got map[string]string
}

func watchBackends(t *testing.T, ctx context.Context, dyn dynamic.Interface) *backendsSeen {
	t.Helper()
	s := &backendsSeen{got: map[string]string{}}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, "default", nil)
	for _, gvr := range []schema.GroupVersionResource{backendsV1, backendsV2} {
		_, _ = factory.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { s.record(o.(*unstructured.Unstructured)) },
			UpdateFunc: func(_, o any) { s.record(o.(*unstructured.Unstructured)) },
		})
	}
	factory.Start(ctx.Done())
	for gvr, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer over %v did not sync", gvr)
		}
	}
	return s
}

func (s *backendsSeen) record(u *unstructured.Unstructured) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[u.GroupVersionKind().Version+"/"+u.GetName()] = backendAddress(u)
}

// backendAddress is spec.address of a v2 object, host:port of a v1 one.
func backendAddress(u *unstructured.Unstructured) string {
	if addr, ok, _ := unstructured.NestedString(u.Object, "spec", "address"); ok {
		return addr
	}
	host, _, _ := unstructured.NestedString(u.Object, "spec", "host")
	port, _, _ := unstructured.NestedInt64(u.Object, "spec", "port")
	return net.JoinHostPort(host, strconv.FormatInt(port, 10))
}

func (s *backendsSeen) wait(t *testing.T, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.mu.Lock()
		missing := ""
		for k, v := range want {
			if s.got[k] != v {
				missing = fmt.Sprintf("%s = %q, want %q", k, s.got[k], v)
			}
		}
		s.mu.Unlock()
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("informers: %s", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wantWatched reads ADDED events of a v2 watch until every name has its
// address.
func wantWatched(t *testing.T, w watch.Interface, want map[string]string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for len(want) > 0 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch ended")
			}
			u, isObj := ev.Object.(*unstructured.Unstructured)
			if ev.Type == watch.Error || !isObj {
				t.Fatalf("watch event %s %v", ev.Type, ev.Object)
			}
			if u.GetAPIVersion() != "net.example.com/v2" {
				t.Errorf("watch event in %s", u.GetAPIVersion())
			}
			if addr := backendAddress(u); want[u.GetName()] == addr {
				delete(want, u.GetName())
			}
		case <-timeout:
			t.Fatalf("watch never showed %v", want)
		}
	}
}

// TestConversionWebhookBehindAService reaches a conversion webhook named
// by service (webhooks/backend-conversion) through --service-map, with a
// certificate for the service's DNS name.
func TestConversionWebhookBehindAService(t *testing.T) {
	t.Parallel()
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(backendsV1.GroupVersion().WithKind("Backend"), &backendV1{})
	scheme.AddKnownTypeWithName(backendsV2.GroupVersion().WithKind("Backend"), &backendV2{})
	hook, err := webhooktest.NewUnstartedServer(nil, webhook.ServeConversion(webhook.SchemeConverter(scheme)), "backend-conversion.webhooks.svc")
	if err != nil {
		t.Fatal(err)
	}
	hook.StartTLS()
	defer hook.Close()
	dir := t.TempDir()
	serviceMap := filepath.Join(dir, "services.json")
	entry := fmt.Sprintf(`{"backend-conversion.webhooks.svc": %q}`, strings.TrimPrefix(hook.URL, "https://"))
	if err := os.WriteFile(serviceMap, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAdmitd(t, filepath.Join(dir, "data"), "--service-map", serviceMap)
	crd := strings.Replace(backendCRD("https://unused", hook.CABundle()),
		`clientConfig: {url: "https://unused", `,
		`clientConfig: {service: {namespace: webhooks, name: backend-conversion, path: /convert}, `, 1)
	a.MustKubectl(t, crd, "apply", "-f", "-")
	a.MustKubectl(t, "apiVersion: net.example.com/v1\nkind: Backend\nmetadata: {name: db}\nspec: {host: db.local, port: 5432}\n", "apply", "-f", "-")
	if got := a.MustKubectl(t, "", "get", "backends.v2.net.example.com", "db", "-o", "jsonpath={.spec.address}"); got != "db.local:5432" {
		t.Errorf("kubectl get v2 db through the service = %q", got)
	}
}
