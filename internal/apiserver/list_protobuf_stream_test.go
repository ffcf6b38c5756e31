package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

// TestProtobufListIsTheWholeList: a list a protobuf-only client gets from
// serveProtobufList is byte for byte the typed list encoded at once by
// apimachinery's protobuf serializer (listObjects, transformList), with
// and without limits, selectors and continue tokens, across storage pages,
// and past protobufListKeepBytes, where the items are read twice.
func TestProtobufListIsTheWholeList(t *testing.T) {
	ts := newTestServer(t)
	res, ok := ts.s.cat.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	if !ok {
		t.Fatal("no configmaps")
	}
	queries := []string{"", "limit=5", "labelSelector=p%3Deven", "limit=3&labelSelector=p%3Dodd", "limit=2000", "fieldSelector=metadata.name%3Dnone"}
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

// checkProtobufLists lists with each query, and follows one continue token.
func checkProtobufLists(t *testing.T, ts *testServer, res *registry.Resource, queries []string) {
	t.Helper()
	for _, query := range queries {
		list := checkProtobufList(t, ts, res, query)
		if list.Continue != "" {
			next := query + "&continue=" + url.QueryEscape(list.Continue)
			if more := checkProtobufList(t, ts, res, next); len(more.Items) == 0 {
				t.Errorf("?%s: no items", next)
			}
		}
	}
}

// checkProtobufList lists with query as a protobuf-only client and checks
// the answer is the list encoded at once at its resourceVersion.
func checkProtobufList(t *testing.T, ts *testServer, res *registry.Resource, query string) *corev1.ConfigMapList {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, cmPath+"?"+query, nil)
	r.Header.Set("Accept", mediaProtobuf)
	w := httptest.NewRecorder()
	ts.s.ServeHTTP(w, r)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != mediaProtobuf {
		t.Fatalf("?%s = %d %s: %.300s", query, w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	obj, _, err := protobufSerializer().Decode(w.Body.Bytes(), nil, nil)
	got, ok := obj.(*corev1.ConfigMapList)
	if err != nil || !ok {
		t.Fatalf("?%s decodes to %T, %v", query, obj, err)
	}
	q, _ := url.ParseQuery(query)
	if q.Get("continue") == "" {
		q.Set("resourceVersion", got.ResourceVersion)
		q.Set("resourceVersionMatch", "Exact")
	}
	lq, err := parseListQuery(res, q)
	if err != nil {
		t.Fatal(err)
	}
	items, lm, err := ts.s.listObjects(context.Background(), res, "default", lq)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := ts.s.transformList(httptest.NewRequest(http.MethodGet, "/", nil), res, negotiated{media: mediaProtobuf}, items, lm)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := protobufSerializer().Encode(whole.(*corev1.ConfigMapList), &want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.Body.Bytes(), want.Bytes()) {
		t.Errorf("?%s: streamed protobuf list differs from the whole list (%d items, %d vs %d bytes)", query, len(got.Items), w.Body.Len(), want.Len())
	}
	return got
}
