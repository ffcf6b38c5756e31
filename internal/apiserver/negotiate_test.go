package apiserver

import (
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/internal/registry"
)

func TestNegotiateOutput(t *testing.T) {
	builtin := &registry.Resource{}
	custom := &registry.Resource{Unstructured: true}
	cases := []struct {
		name   string
		accept string
		res    *registry.Resource
		want   negotiated
		err    bool
	}{
		{"no header", "", builtin, negotiated{media: mediaJSON}, false},
		{"wildcard", "*/*", builtin, negotiated{media: mediaJSON}, false},
		{"protobuf", "application/vnd.kubernetes.protobuf", builtin, negotiated{media: mediaProtobuf}, false},
		{"custom resource in protobuf", "application/vnd.kubernetes.protobuf", custom, negotiated{}, true},
		{"custom resource falls back to json", "application/vnd.kubernetes.protobuf, application/json", custom, negotiated{media: mediaJSON}, false},
		{"partial in protobuf", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", custom,
			negotiated{media: mediaProtobuf, as: asPartial, version: "v1"}, false},
		{"partial list v1beta1", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1", builtin,
			negotiated{media: mediaJSON, as: asPartialList, version: "v1beta1"}, false},
		{"table in protobuf is skipped", "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1, application/json;as=Table;g=meta.k8s.io;v=v1", builtin,
			negotiated{media: mediaJSON, as: asTable, version: "v1"}, false},
		{"higher q wins", "application/json;q=0.5, application/yaml", builtin, negotiated{media: mediaYAML}, false},
		{"unknown as", "application/json;as=Foo;g=meta.k8s.io;v=v1", builtin, negotiated{}, true},
		{"wrong group", "application/json;as=Table;g=example.com;v=v1", builtin, negotiated{}, true},
		{"wrong version", "application/json;as=Table;g=meta.k8s.io;v=v2", builtin, negotiated{}, true},
		{"server version", "application/json;sv=v1", builtin, negotiated{}, true},
		{"yaml stream", "application/yaml;stream=watch", builtin, negotiated{}, true},
		{"json stream", "application/json;stream=watch", builtin, negotiated{media: mediaJSON}, false},
		{"unknown media", "text/html", builtin, negotiated{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/v1/pods", nil)
			r.Header.Set("Accept", tc.accept)
			got, err := negotiateOutput(r, tc.res)
			if tc.err {
				if err == nil || apierrors.ReasonForError(err) != "NotAcceptable" {
					t.Errorf("negotiateOutput(%q) = %+v, %v; want 406 NotAcceptable", tc.accept, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("negotiateOutput(%q) = %+v, %v; want %+v", tc.accept, got, err, tc.want)
			}
		})
	}
}

func FuzzNegotiateOutput(f *testing.F) {
	f.Add("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")
	f.Add("*/*;q=0.1, application/vnd.kubernetes.protobuf;stream=watch")
	f.Fuzz(func(t *testing.T, accept string) {
		r := httptest.NewRequest("GET", "/api/v1/pods", nil)
		r.Header.Set("Accept", accept)
		n, err := negotiateOutput(r, &registry.Resource{})
		if err == nil && n.media == "" {
			t.Errorf("negotiateOutput(%q) chose no media type", accept)
		}
	})
}
