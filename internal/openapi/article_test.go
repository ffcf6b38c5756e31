package openapi

import "testing"

// TestArticle: the operation descriptions' articles, as kube-apiserver
// 1.37.2 publishes them ("create an APIService", "create Endpoints").
func TestArticle(t *testing.T) {
	for kind, want := range map[string]string{"APIService": " an ", "Ingress": " an ", "Pod": " a ", "Endpoints": " ", "StorageClass": " a "} {
		if got := article(kind); got != want {
			t.Errorf("article(%q) = %q, want %q", kind, got, want)
		}
	}
}
