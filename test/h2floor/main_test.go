package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func floorClient(t *testing.T, window time.Duration) *rest.Config {
	t.Helper()
	return floorClientOf(t, newHub(window))
}

func floorClientOf(t *testing.T, h *hub) *rest.Config {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig(srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A client-go create, as loadgen sends it (protobuf, HTTP/2), gets its own
// object back from the floor server, through the kubeconfig it writes.
func TestCreateThroughTheFloorServer(t *testing.T) {
	cfg := floorClient(t, 0)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs := kubernetes.NewForConfigOrDie(cfg)
	in := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-1"}, Data: map[string]string{"k": "v"}}
	out, err := cs.CoreV1().ConfigMaps("bench").Create(t.Context(), in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Name != "cm-1" || out.Data["k"] != "v" {
		t.Errorf("created = %+v, want the object sent", out)
	}
}

// With a durable log, concurrent creates are answered once their bodies
// are in the log's file, each one whole.
func TestDurableCreatesAreInTheLog(t *testing.T) {
	dir := t.TempDir()
	l, err := openDurableLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := newHub(0)
	h.log = l
	cs := kubernetes.NewForConfigOrDie(floorClientOf(t, h))
	names := []string{"durable-a", "durable-b", "durable-c", "durable-d"}
	errs := make(chan error, len(names))
	for _, name := range names {
		go func() {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
			_, err := cs.CoreV1().ConfigMaps("d").Create(t.Context(), cm, metav1.CreateOptions{})
			errs <- err
		}()
	}
	for range names {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "h2floor.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !bytes.Contains(data, []byte(name)) {
			t.Errorf("the log has no create of %s: %q", name, data)
		}
	}
}

// A client-go watch of a collection decodes, as an ADDED event, each JSON
// create of that collection after it, with the fields a server sets, and
// nothing of another collection.
func TestWatchThroughTheFloorServer(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(floorClient(t, time.Millisecond))
	list, err := cs.CoreV1().ConfigMaps("watched").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().ConfigMaps("watched").Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, ns := range []string{"other", "watched"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-" + ns}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case ev := <-w.ResultChan():
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Added || !ok || cm.Name != "cm-watched" || cm.Namespace != "watched" || cm.ResourceVersion == "" || len(cm.ManagedFields) != 1 {
			t.Errorf("event = %s %+v, want ADDED cm-watched with the fields a server sets", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
}
