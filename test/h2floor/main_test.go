package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// A client-go create, as loadgen sends it (protobuf, HTTP/2), gets its own
// object back from the floor server, through the kubeconfig it writes.
func TestCreateThroughTheFloorServer(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(echo))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig(srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
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
