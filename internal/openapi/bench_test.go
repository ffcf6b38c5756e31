package openapi

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/admitd/admitd/internal/registry"
)

// BenchmarkFirstIndex is the first /openapi/v3 request of a server: every
// built-in definition generated and every group-version document encoded.
func BenchmarkFirstIndex(b *testing.B) {
	cat := registry.NewCatalogue()
	for b.Loop() {
		if rec := get(New(cat, Options{}), "/openapi/v3", ""); rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkCRDChange is the index request after a custom resource is
// added: only its group-version is rebuilt.
func BenchmarkCRDChange(b *testing.B) {
	cat := registry.NewCatalogue()
	s := New(cat, Options{})
	get(s, "/openapi/v3", "")
	i := 0
	for b.Loop() {
		crd := crontabCRD()
		crd.Spec.Group = "g" + strconv.Itoa(i) + ".example.com"
		cat.SetCustom(crd.Spec.Group, registry.CustomResources(crd))
		if rec := get(s, "/openapi/v3", ""); rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
		cat.SetCustom(crd.Spec.Group, nil)
		i++
	}
}

// BenchmarkV2 builds the v2 document, as JSON and as gnostic protobuf.
func BenchmarkV2(b *testing.B) {
	cat := registry.NewCatalogue()
	for _, accept := range []string{"application/json", mediaV2Protobuf} {
		b.Run(accept, func(b *testing.B) {
			s := New(cat, Options{})
			get(s, "/openapi/v3", "")
			for b.Loop() {
				s.v2, s.v2pb = nil, nil
				if rec := get(s, "/openapi/v2", accept); rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}
