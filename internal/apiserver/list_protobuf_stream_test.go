package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// TestProtobufListIsTheWholeList: a list (or a v1 PartialObjectMetadataList)
// a protobuf-only client gets from serveProtobufList is byte for byte the
// typed list encoded at once by apimachinery's protobuf serializer
// (listObjects, transformList), with and without limits, selectors and
// continue tokens, across storage pages, and past protobufListKeepBytes,
// where the items are read twice.
func TestProtobufListIsTheWholeList(t *testing.T) {
	ts := newTestServer(t)
	res, queries := configMaps(t, ts), listQueries
	checkProtobufLists(t, ts, res, queries) // empty
	for i := 0; i < 2*listStreamPage+7; i++ {
		ts.must(http.StatusCreated, http.MethodPost, cmPath, mediaJSON, configMapOf(i, fmt.Sprintf("<v&%d>", i)))
	}
	checkProtobufLists(t, ts, res, queries)
	// past protobufListKeepBytes: the whole list, and its even half
	big := strings.Repeat("x", protobufListKeepBytes/3)
	for i := 2 * listStreamPage; i < 2*listStreamPage+7; i++ {
		ts.must(http.StatusOK, http.MethodPut, cmPath+fmt.Sprintf("/cm-%04d", i), mediaJSON, configMapOf(i, big))
	}
	checkProtobufLists(t, ts, res, queries)
}

func configMapOf(i int, value string) string {
	label := "odd"
	if i%2 == 0 {
		label = "even"
	}
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%04d","labels":{"p":%q}},"data":{"k":%q}}`, i, label, value)
}

// checkProtobufLists lists with each query, as a list and as metadata, and
// follows one continue token.
func checkProtobufLists(t *testing.T, ts *testServer, res *registry.Resource, queries []string) {
	t.Helper()
	for _, accept := range []string{mediaProtobuf, mediaProtobuf + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"} {
		for _, query := range queries {
			if cont := checkProtobufList(t, ts, res, accept, query); cont != "" {
				checkProtobufList(t, ts, res, accept, query+"&continue="+url.QueryEscape(cont))
			}
		}
	}
}

// checkProtobufList lists with query as a protobuf-only client and checks
// the answer is the list encoded at once at its resourceVersion; it
// returns the continue token.
func checkProtobufList(t *testing.T, ts *testServer, res *registry.Resource, accept, query string) string {
	t.Helper()
	r, w := listAs(t, ts, accept, query, mediaProtobuf)
	var into runtime.Object // the list's type, from the scheme
	if strings.Contains(accept, asPartialList) {
		into = &metav1.PartialObjectMetadataList{}
	}
	obj, _, err := protobufSerializer().Decode(w.Body.Bytes(), nil, into)
	if err != nil {
		t.Fatalf("%s ?%s: %v", accept, query, err)
	}
	got, err := meta.ListAccessor(obj)
	if err != nil {
		t.Fatalf("%s ?%s decodes to %T: %v", accept, query, obj, err)
	}
	whole, _, items := wholeAnswer(t, ts, res, r, query, got.GetResourceVersion())
	var want bytes.Buffer
	if err := protobufSerializer().Encode(whole.(runtime.Object), &want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.Body.Bytes(), want.Bytes()) {
		t.Errorf("%s ?%s: streamed protobuf list differs from the whole list (%d items, %d vs %d bytes)", accept, query, items, w.Body.Len(), want.Len())
	}
	return got.GetContinue()
}
