package explain

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigFor writes a kubeconfig for an httptest TLS server.
func kubeconfigFor(t *testing.T, url string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: url, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func podFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A server that is not admitd (no admitd version, no trace endpoint) gets
// a clear message and no dry run.
func TestNotAdmitd(t *testing.T) {
	var writes int
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/version":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
		case r.Method != http.MethodGet:
			writes++
			http.NotFound(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	err := Run(context.Background(), Options{File: podFile(t), Kubeconfig: kubeconfigFor(t, srv.URL)}, &strings.Builder{})
	if !errors.Is(err, ErrNotAdmitd) || !strings.Contains(err.Error(), "is not admitd (it reports version v1.37.2") {
		t.Errorf("Run against kube-apiserver = %v, want ErrNotAdmitd naming the version", err)
	}
	if writes != 0 {
		t.Errorf("%d writes sent to a server that is not admitd", writes)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.yaml")
	noKind := filepath.Join(dir, "nokind.yaml")
	_ = os.WriteFile(two, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n"), 0o600)
	_ = os.WriteFile(noKind, []byte("metadata: {name: a}\n"), 0o600)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{}, "an object file is required"},
		{Options{File: two}, "holds 2 objects; explain takes one"},
		{Options{File: noKind}, "needs apiVersion and kind"},
		{Options{File: two, Operation: "PATCH"}, "--operation must be CREATE, UPDATE or DELETE"},
		{Options{File: two, Output: "yaml"}, "--output must be tree or json"},
	} {
		if err := Run(context.Background(), tc.o, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
}
