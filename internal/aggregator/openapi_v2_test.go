package aggregator

import (
	"context"
	"io"
	"net/http"
	"slices"
	"testing"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// TestOpenAPIV2Specs: a remote server's /openapi/v2 is kept filtered to its
// APIService's group/version, fetched once while its APIService is
// unchanged, and left out once the APIService is unavailable.
func TestOpenAPIV2Specs(t *testing.T) {
	proxyCA, cert := newProxyIdentity(t)
	fetches := 0
	b := newBackend(t, proxyCA, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openapi/v2" {
			http.NotFound(w, r)
			return
		}
		fetches++
		_, _ = io.WriteString(w, `{"swagger":"2.0","info":{"title":"wardle","version":"v0"},"paths":{`+
			`"/apis/wardle.example.com/v1alpha1/flunders":{"get":{"operationId":"listFlunder","responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/io.wardle.Flunder"}}}}},`+
			`"/apis/other.example.com/v1/things":{"get":{"operationId":"listThing","responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/io.other.Thing"}}}}}},`+
			`"definitions":{"io.wardle.Flunder":{"type":"object"},"io.other.Thing":{"type":"object"}}}`)
	})
	st := newStored()
	s := wardle(t, st, b, true)
	a := New(Options{APIServices: st, Services: st, ProxyClientCert: cert})
	specs, key := a.OpenAPIV2Specs(context.Background())
	if len(specs) != 1 || key == "" {
		t.Fatalf("%d documents, key %q; want one", len(specs), key)
	}
	var paths, defs []string
	for p := range specs[0].Paths.Paths {
		paths = append(paths, p)
	}
	for d := range specs[0].Definitions {
		defs = append(defs, d)
	}
	if !slices.Equal(paths, []string{"/apis/wardle.example.com/v1alpha1/flunders"}) || !slices.Equal(defs, []string{"io.wardle.Flunder"}) {
		t.Errorf("filtered document: paths %v, definitions %v; want the wardle group/version's only", paths, defs)
	}
	if _, again := a.OpenAPIV2Specs(context.Background()); again != key || fetches != 1 {
		t.Errorf("second call: key %q (was %q), %d fetches; want the kept document", again, key, fetches)
	}
	st.update(func() { s.Status.Conditions[0].Status = apiregistrationv1.ConditionFalse })
	if specs, _ := a.OpenAPIV2Specs(context.Background()); len(specs) != 0 {
		t.Errorf("an unavailable APIService contributed %d documents", len(specs))
	}
}

// TestSortForMerge: by the group's highest priority, then by name (within a
// group, by name, as upstream's comparison of one version priority with
// itself leaves it).
func TestSortForMerge(t *testing.T) {
	svc := func(name, group string, gp, vp int32) *apiregistrationv1.APIService {
		s := &apiregistrationv1.APIService{Spec: apiregistrationv1.APIServiceSpec{Group: group, GroupPriorityMinimum: gp, VersionPriority: vp}}
		s.Name = name
		return s
	}
	in := []*apiregistrationv1.APIService{svc("v1.low", "low", 100, 50), svc("v2.high", "high", 500, 1), svc("v1.high", "high", 200, 99),
		svc("v1.mid", "mid", 300, 1)}
	sortForMerge(in)
	var got []string
	for _, s := range in {
		got = append(got, s.Name)
	}
	if want := []string{"v1.high", "v2.high", "v1.mid", "v1.low"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
