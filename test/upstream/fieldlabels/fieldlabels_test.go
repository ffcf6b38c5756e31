// Package fieldlabels compares the field selectors admitd takes on a list
// of every built-in resource it serves with upstream's field label
// conversions (legacyscheme, as kube-apiserver 1.37.2 registers them):
// which labels are taken, and the message refusing the others.
package fieldlabels

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage/memory"
	"github.com/admitd/admitd/test/upstream/internal/legacyinstall"
)

// TestFieldLabelsLikeUpstream: for every served built-in resource that
// lists, every label any kind knows (and some none does) is taken or
// refused, with the message, as upstream's conversion for its kind.
func TestFieldLabelsLikeUpstream(t *testing.T) {
	cat := registry.NewCatalogue()
	api := apiserver.New(apiserver.Config{Store: memory.New(), Catalogue: cat, Admission: admission.NewChain()})
	if err := api.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	labels := []string{"metadata.name", "metadata.namespace", "bogus.field", "status.replicas", "spec.replicas"}
	for _, res := range cat.Resources() {
		for _, l := range res.FieldLabels {
			if !slices.Contains(labels, l) {
				labels = append(labels, l)
			}
		}
	}
	compared := 0
	for _, res := range cat.Resources() {
		if res.Unstructured || !res.HasVerb("list") || slices.Contains(legacyinstall.OwnSchemes, res.Group) {
			continue
		}
		for _, label := range labels {
			want := ""
			if _, _, err := legacyscheme.Scheme.ConvertFieldLabel(res.GroupVersionKind(), label, "x"); err != nil {
				want = err.Error()
			}
			if got := listRefusal(t, api, res, label); got != want {
				t.Errorf("%s: fieldSelector %s=x refused with %q, upstream %q", res.GroupVersionResource, label, got, want)
			}
			compared++
		}
	}
	t.Logf("%d resources and labels compared (%d labels)", compared, len(labels))
	if compared < 500 {
		t.Errorf("only %d comparisons: the catalogue no longer lists the built-in resources", compared)
	}
}

// listRefusal is the message of the 400 a cluster-wide list of res with
// the field selector label=x gets; "" when it is served.
func listRefusal(t *testing.T, api http.Handler, res *registry.Resource, label string) string {
	t.Helper()
	path := "/apis/" + res.Group + "/" + res.Version
	if res.Group == "" {
		path = "/api/" + res.Version
	}
	r := httptest.NewRequest(http.MethodGet, path+"/"+res.Resource+"?limit=1&fieldSelector="+url.QueryEscape(label+"=x"), nil)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	if w.Code == http.StatusOK {
		return ""
	}
	var st metav1.Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || w.Code != http.StatusBadRequest {
		t.Fatalf("%s with %s: %d %s", res.GroupVersionResource, label, w.Code, w.Body)
	}
	return st.Message
}
