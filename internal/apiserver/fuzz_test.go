package apiserver

// Fuzz targets for what the server parses from a client: the request path,
// query parameters, bodies, patches and continue tokens. Each has seeds
// here and a corpus in testdata/fuzz/<Name> (adversarial inputs, and every
// input that once failed); `go test` replays both, .ci/fuzz fuzzes each for
// a bounded time.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/yamlbound"
)

// upstreamRequestInfo is kube-apiserver's own request parser, configured as
// its server configures it.
var upstreamRequestInfo = &genericrequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}

// parseRequestInfo never panics, is deterministic, puts no slash inside a
// path segment it returns, and reads a path as upstream's RequestInfoFactory
// does.
func FuzzParseRequestInfo(f *testing.F) {
	for _, target := range []string{
		"/api/v1/namespaces/default/pods/p", "/api/v1/namespaces/ns", "/api/v1/namespaces/ns/status",
		"/apis/apps/v1/namespaces/ns/deployments/d/scale", "/api/v1/namespaces/ns/pods/p/proxy/a/b",
		"/api/v1/pods?watch=1", "/api/v1/pods?watch=F&limit=x", "/api/v1/pods?fieldSelector=metadata.name%3Dp",
		"/api/v1/namespaces/a%2Fb/pods/..", "//api//v1//pods//", "/apis/g", "/api/v1/watch/pods", "/version",
	} {
		for _, method := range []string{"GET", "POST", "DELETE"} {
			f.Add(method, target)
		}
	}
	klog.SetLogger(logr.Discard()) // upstream's parser logs every query it cannot decode
	f.Fuzz(func(t *testing.T, method, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		r := &http.Request{Method: method, URL: u}
		ri := parseRequestInfo(r)
		if again := parseRequestInfo(r); !reflect.DeepEqual(ri, again) {
			t.Fatalf("parseRequestInfo(%s %q) = %+v, then %+v", method, target, ri, again)
		}
		for field, v := range map[string]string{"group": ri.Group, "version": ri.Version, "namespace": ri.Namespace,
			"resource": ri.Resource, "name": ri.Name, "subresource": ri.Subresource} {
			if strings.Contains(v, "/") {
				t.Fatalf("parseRequestInfo(%q).%s = %q, has a slash", target, field, v)
			}
		}
		compareUpstreamRequestInfo(t, r, ri)
	})
}

// compareUpstreamRequestInfo checks ri against upstream's parse of r, but
// for what admitd knowingly does otherwise: it serves neither deprecated
// verb-in-path form (/api/v1/watch/..., /api/v1/proxy/...), takes no name
// from a list's fieldSelector, and calls connect subresources and a named
// GET ?watch "connect" and "watch" where upstream says create/get and get.
func compareUpstreamRequestInfo(t *testing.T, r *http.Request, ri *requestInfo) {
	parts := splitPath(r.URL.Path)
	verbAt := 2
	if len(parts) > 0 && parts[0] == "apis" {
		verbAt = 3
	}
	if len(parts) > verbAt && (parts[verbAt] == "watch" || parts[verbAt] == "proxy") {
		return
	}
	up, err := upstreamRequestInfo.NewRequestInfo(r)
	if err != nil {
		t.Fatalf("upstream's RequestInfoFactory(%q): %v", r.URL, err)
	}
	if ri.IsResource != up.IsResourceRequest {
		t.Fatalf("parseRequestInfo(%q).IsResource = %v, upstream's %v", r.URL, ri.IsResource, up.IsResourceRequest)
	}
	if !ri.IsResource {
		return
	}
	got := []string{ri.APIPrefix, ri.Group, ri.Version, ri.Namespace, ri.Resource, ri.Subresource}
	want := []string{up.APIPrefix, up.APIGroup, up.APIVersion, up.Namespace, up.Resource, up.Subresource}
	if _, ok := r.URL.Query()["fieldSelector"]; !ok {
		got, want = append(got, ri.Name), append(want, up.Name)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseRequestInfo(%q) = %q, upstream's %q", r.URL, got, want)
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return
	}
	if ri.Verb == "connect" || ri.Verb == "watch" && ri.Name != "" && up.Verb == "get" {
		return
	}
	if ri.Verb != up.Verb {
		t.Fatalf("parseRequestInfo(%s %q).Verb = %q, upstream's %q", r.Method, r.URL, ri.Verb, up.Verb)
	}
}

var fuzzMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// A request for any target, routed and served by a whole server, is never
// a panic or a 5xx, and an error is a Status of the code answered. Writes
// are dry runs (dryRun=All comes first in the query) and carry no body, so
// the store keeps what the setup created.
func FuzzServeRequest(f *testing.F) {
	for _, seed := range []string{
		"/api/v1/namespaces/default/configmaps/c", "/api/v1/namespaces/default/configmaps/..", "/api/v1/namespaces/default/configmaps/a,b?watch=1",
		"/api/v1/namespaces/default/configmaps?watch=true&labelSelector=a%3Db", "/api/v1/namespaces/default/configmaps?limit=1&continue=x",
		"/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact&resourceVersion=-5", "/api/v1/namespaces/default/pods/p/exec?command=ls&stdin=yes",
		"/api/v1/namespaces/default/pods/p/log", "/apis/apps/v1/namespaces/default/deployments/d/scale", "/api/v1/namespaces/default/finalize",
		"/api/v1/namespaces/%2F/configmaps", "//api//v1//namespaces//default//configmaps//", "/api/v1/namespaces/default/configmaps/c/",
		"/apis", "/apis/apps", "/api/v1", "/openapi/v3/apis/apps/v1", "/version", "/api/v1/nodes/n/proxy/a/b?x=%ff", "/api/v1/namespaces/\xff/configmaps",
	} {
		f.Add(uint8(0), seed)
		f.Add(uint8(5), seed)
	}
	ts := newTestServer(f)
	ts.s.cfg.RevisionWait = time.Millisecond // a revision the store has not reached: 504 at once
	ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"c","labels":{"a":"b"}},"data":{"k":"v"}}`)
	f.Fuzz(func(t *testing.T, m uint8, target string) {
		method := fuzzMethods[int(m)%len(fuzzMethods)]
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.1\r\nHost: admitd\r\n\r\n")))
		if err != nil {
			return
		}
		if method != http.MethodGet && method != http.MethodHead {
			r.URL.RawQuery = "dryRun=All&" + r.URL.RawQuery
		}
		ctx := context.Background()
		if parseRequestInfo(r).Verb == "watch" {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, 10*time.Millisecond)
			defer cancel()
		}
		w := httptest.NewRecorder()
		ts.s.ServeHTTP(w, r.WithContext(ctx))
		if w.Code >= 500 && !upstreams500(w.Code, w.Body.String()) {
			t.Fatalf("%s %q = %d %.500s", method, target, w.Code, w.Body)
		}
		var st metav1.Status
		if w.Code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), mediaJSON) && json.Unmarshal(w.Body.Bytes(), &st) == nil && int(st.Code) != w.Code {
			t.Fatalf("%s %q = %d with a Status of code %d", method, target, w.Code, st.Code)
		}
	})
}

// upstreams500 says whether a 5xx answer is one kube-apiserver gives too:
// a get or watch at a resourceVersion that does not parse is its storage's
// error, a 500 (the real server answers so; a list's is a 400).
func upstreams500(code int, body string) bool {
	return code == http.StatusInternalServerError && strings.Contains(body, `"message":"resourceVersion: Invalid value: `)
}

// checkClientError fails unless err is nil or a Status with a 4xx code.
func checkClientError(t *testing.T, what string, input any, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		t.Fatalf("%s(%q) = %v (%T), want a Status", what, input, err, err)
	}
	if code := st.Status().Code; code < 400 || code > 499 {
		t.Fatalf("%s(%q) = %d %v, want a 4xx", what, input, code, err)
	}
}

// upstreamBool is how upstream's parameter codec reads a boolean query
// parameter (runtime.Convert_Slice_string_To_bool): false when absent, "0"
// or "false" in any case, true for anything else, "" included.
func upstreamBool(vals []string) bool {
	return len(vals) > 0 && vals[0] != "0" && !strings.EqualFold(vals[0], "false")
}

// The options of every verb decode from any query without a panic, fail
// only with a 4xx Status, and read booleans as upstream does.
func FuzzQueryOptions(f *testing.F) {
	for _, seed := range []string{
		"limit=-1", "limit=9223372036854775808", "continue=%ZZ", "labelSelector=a%20in%20(", "fieldSelector=spec.nodeName%3Dx",
		"fieldSelector=metadata.name%3D%3D%3D", "dryRun=All&dryRun=x", "fieldManager=" + strings.Repeat("m", 200), "fieldValidation=Bogus",
		"propagationPolicy=Foo", "gracePeriodSeconds=-5", "gracePeriodSeconds=99999999999999999999", "orphanDependents=true&propagationPolicy=Foreground",
		"stdin=yes&command=ls", "stdin=&stdout=F&tty=0&container=%00", "ports=80&ports=x", "path=/..%2F", "force=true", "%", "a=%&b", "allowWatchBookmarks=",
	} {
		f.Add(seed)
	}
	ts := newTestServer(f)
	ts.s.cfg.RevisionWait = time.Millisecond // a revision the store has not reached: 504 at once
	configmaps, _ := ts.s.cat.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	f.Fuzz(func(t *testing.T, rawQuery string) {
		r := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/", RawQuery: rawQuery}, Header: http.Header{}, Body: http.NoBody}
		q := r.URL.Query()
		lq, err := parseListQuery(configmaps, q)
		checkClientError(t, "parseListQuery", rawQuery, err)
		if err == nil && lq.allowBookmarks != upstreamBool(q["allowWatchBookmarks"]) {
			t.Fatalf("parseListQuery(%q).allowBookmarks = %v, upstream reads %v", rawQuery, lq.allowBookmarks, !lq.allowBookmarks)
		}
		_, err = parseCreateOptions(r)
		checkClientError(t, "parseCreateOptions", rawQuery, err)
		_, err = parseUpdateOptions(r)
		checkClientError(t, "parseUpdateOptions", rawQuery, err)
		for _, mt := range []string{mediaJSONPatch, mediaMergePatch, mediaStrategicPatch, mediaApplyPatch} {
			_, err = parsePatchOptions(r, mt)
			checkClientError(t, "parsePatchOptions "+mt, rawQuery, err)
		}
		_, err = ts.s.parseDeleteOptions(r)
		checkClientError(t, "parseDeleteOptions", rawQuery, err)
		for _, kind := range []string{"PodExecOptions", "PodAttachOptions", "PodPortForwardOptions", "PodProxyOptions", "NodeProxyOptions", "ServiceProxyOptions"} {
			obj, err := connectOptions(r, schema.GroupVersionKind{Version: "v1", Kind: kind})
			checkClientError(t, "connectOptions "+kind, rawQuery, err)
			if err == nil {
				checkBools(t, q, obj)
			}
		}
	})
}

// checkBools compares the boolean fields of a decoded options object with
// upstream's reading of the query.
func checkBools(t *testing.T, q url.Values, obj runtime.Object) {
	v := reflect.ValueOf(obj).Elem()
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if v.Field(i).Kind() == reflect.Bool && v.Field(i).Bool() != upstreamBool(q[name]) {
			t.Fatalf("%T.%s = %v for %q, upstream reads %v", obj, name, v.Field(i).Bool(), q[name], !v.Field(i).Bool())
		}
	}
}

var fuzzMedia = []string{mediaJSON, mediaYAML, mediaProtobuf, "text/plain"}

// fuzzResources are what bodies decode as: a simple and a large built-in
// kind, and a custom resource.
func fuzzResources(tb testing.TB) []*registry.Resource {
	cat := registry.NewCatalogue()
	configmaps, ok1 := cat.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	pods, ok2 := cat.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	if !ok1 || !ok2 {
		tb.Fatal("no configmaps or pods in the catalogue")
	}
	widgets := &registry.Resource{GroupVersionResource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
		Kind: "Widget", Namespaced: true, Unstructured: true}
	return []*registry.Resource{configmaps, pods, widgets}
}

// checkBounded fails if obj's JSON is out of proportion to the input it
// was decoded from (a few defaulted fields aside), or larger than extra,
// what aliases may add to YAML or copies to a JSON patch.
func checkBounded(t *testing.T, what string, input []byte, obj any, extra int) {
	t.Helper()
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("%s(%q): the decoded object does not encode: %v", what, input, err)
	}
	if limit := 32*len(input) + 16<<10 + extra; len(out) > limit {
		t.Fatalf("%s(%.200q): %d bytes in, %d bytes of JSON out (bound %d)", what, input, len(input), len(out), limit)
	}
}

// A body of any media type decodes as an object, DeleteOptions or an apply
// configuration without a panic, fails only with a 4xx Status, and yields
// an object in proportion to it, or within yamlbound's limit.
func FuzzDecodeBody(f *testing.F) {
	pb := func(obj runtime.Object) []byte {
		var b strings.Builder
		if err := protobufSerializer().Encode(obj, &b); err != nil {
			f.Fatal(err)
		}
		return []byte(b.String())
	}
	cm := pb(&corev1ConfigMap)
	for _, seed := range []struct {
		res, media uint8
		body       string
	}{
		{0, 0, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`},
		{1, 1, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: i\n"},
		{2, 0, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"a":[1,2.5,"x"]}}`},
		{0, 2, string(cm)}, {0, 2, string(cm[:len(cm)/2])}, {0, 2, "k8s\x00"}, {1, 2, "k8s\x00\x0a\xff\xff\xff\xff\x0f"},
		{0, 0, strings.Repeat(`{"a":`, 10000)}, {2, 0, strings.Repeat("[", 100000)}, {0, 0, `{"data":{"a":1e999999}}`},
		{2, 0, `{"apiVersion":"example.com/v1","kind":"Widget","spec":{"n":123456789012345678901234567890}}`},
		{0, 0, "{\"metadata\":{\"name\":\"\xff\xfe\"}}"}, {0, 1, "a: &a [1]\nb: *a\n"}, {0, 3, "{}"},
	} {
		f.Add(seed.res, seed.media, []byte(seed.body))
	}
	resources := fuzzResources(f)
	f.Fuzz(func(t *testing.T, which, media uint8, data []byte) {
		res, mt := resources[int(which)%len(resources)], fuzzMedia[int(media)%len(fuzzMedia)]
		aliases := 0
		if mt == mediaYAML {
			aliases = yamlbound.MinLimit
		}
		obj, _, err := decodeObject(res, mt, data)
		checkClientError(t, "decodeObject "+mt, data, err)
		if err == nil {
			checkBounded(t, "decodeObject "+mt, data, obj, aliases)
		}
		var opts metav1.DeleteOptions
		if decodeDeleteOptions(mt, data, &opts) == nil { // the caller makes any error a 400
			checkBounded(t, "decodeDeleteOptions "+mt, data, &opts, aliases)
		}
		cfg, err := decodeApplyConfiguration(data)
		checkClientError(t, "decodeApplyConfiguration", data, err)
		if err == nil {
			checkBounded(t, "decodeApplyConfiguration", data, cfg, yamlbound.MinLimit)
		}
		_ = bodyAPIVersion(data)
	})
}

var corev1ConfigMap = func() corev1.ConfigMap {
	cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", Labels: map[string]string{"a": "b"}}, Data: map[string]string{"k": "v"}}
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	return cm
}()

var fuzzPatchTypes = []string{mediaJSONPatch, mediaMergePatch, mediaStrategicPatch}

var fuzzValidation = []string{"", metav1.FieldValidationIgnore, metav1.FieldValidationWarn, metav1.FieldValidationStrict}

// A patch of each type applies to an object, or fails with a 4xx Status
// (a strategic merge's own errors aside: upstream answers them 500 too),
// and the result is in proportion to the object and the patch: a JSON
// patch's copies add at most JSONPatchMaxCopyBytes, as New bounds them.
func FuzzApplyPatch(f *testing.F) {
	for _, seed := range []struct {
		typ  uint8
		body string
	}{
		{0, `[{"op":"add","path":"/data/b","value":"2"},{"op":"remove","path":"/data/k"}]`},
		{0, `[{"op":"test","path":"/metadata/name","value":"c"},{"op":"move","from":"/data/k","path":"/data/m"}]`},
		{0, copyBomb(16)}, {0, `[{"op":"copy","from":"","path":"/data/x"}]`}, {0, `[{"op":"add","path":"/data/-","value":"x"}]`},
		{0, `[{"op":"replace","path":"/metadata","value":null}]`}, {0, `[{"op":"add","path":"/kind","value":"Secret"}]`},
		{1, `{"data":{"k":null,"n":"1"},"metadata":{"labels":{"x":"y"}}}`}, {1, `{"apiVersion":"v2"}`}, {1, `[1]`},
		{2, `{"data":{"$patch":"replace","z":"1"}}`}, {2, `{"metadata":{"$setElementOrder/finalizers":["a"],"finalizers":["a"]}}`},
		{2, `{"$retainKeys":["data"],"data":{}}`}, {2, `{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"u"}]}}`},
		{1, strings.Repeat(`{"a":`, 10000)}, {2, "{\"data\":{\"\xff\":\"\xfe\"}}"}, {0, `[{"op":"add","path":"/data/n","value":1e999}]`},
	} {
		f.Add(seed.typ, uint8(0), []byte(seed.body))
		f.Add(seed.typ, uint8(3), []byte(seed.body))
	}
	limitJSONPatchCopies(defaultJSONPatchMaxCopyBytes)
	resources := fuzzResources(f)
	configmaps := resources[0]
	current, _ := json.Marshal(&corev1ConfigMap)
	f.Fuzz(func(t *testing.T, typ, validation uint8, patch []byte) {
		mt, fv := fuzzPatchTypes[int(typ)%len(fuzzPatchTypes)], fuzzValidation[int(validation)%len(fuzzValidation)]
		rq := &request{info: &requestInfo{}, record: admission.NewRecord()}
		obj, err := applyPatch(rq, configmaps, mt, patch, corev1ConfigMap.DeepCopy(), fv)
		var st apierrors.APIStatus
		if err != nil && mt == mediaStrategicPatch && !errors.As(err, &st) {
			return
		}
		checkClientError(t, "applyPatch "+mt, patch, err)
		if err == nil {
			checkBounded(t, "applyPatch "+mt, patch, obj, len(current)+defaultJSONPatchMaxCopyBytes)
		}
	})
}

// A continue token decodes or is a 400; what encodeContinue makes decodes
// back to its key and revision; and a list with any token is never a 5xx
// but upstream's 504 for a revision the store has not reached.
func FuzzContinueToken(f *testing.F) {
	ts := newTestServer(f)
	ts.s.cfg.RevisionWait = time.Millisecond // a revision the store has not reached: 504 at once
	for _, name := range []string{"c1", "c2", "c3"} {
		ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"`+name+`"}}`)
	}
	page := ts.do("GET", cmPath+"?limit=1", "", "")
	var list metav1.List
	if err := json.Unmarshal(page.Body.Bytes(), &list); err != nil || list.Continue == "" {
		f.Fatalf("first page: %v %s", err, page.Body)
	}
	const prefix = "/registry/core/configmaps/default/"
	for _, seed := range []struct {
		token, key string
		rev        int64
	}{
		{list.Continue, "c2\x00", 5}, {encodeContinue("/registry/core/secrets/default/s", "/registry/core/secrets/", 5), "", 0},
		{encodeContinue(prefix+"../../secrets/", prefix, 5), "\u2028<&>", 1}, {encodeContinue(prefix, prefix, 1), "", -1},
		{encodeContinue(prefix+"c", prefix, 1<<62), "\xff", 9}, {"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MX0", "", 0},
		{"%%%", "", 0}, {"e30", "", 0}, {"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTF9", "", 0}, {"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MWU5OTl9", "", 0},
	} {
		f.Add(seed.token, seed.key, seed.rev)
	}
	f.Fuzz(func(t *testing.T, token, key string, rev int64) {
		// Upstream's rule: a token's revision is not 0 (a negative one is
		// the latest) and its start key stays under the list's prefix.
		if got, gotRev, err := decodeContinue(token, prefix); err != nil && !apierrors.IsBadRequest(err) || err == nil && (gotRev == 0 || !strings.HasPrefix(got, prefix)) {
			t.Fatalf("decodeContinue(%q) = %q, revision %d, %v; want a key under %s and a revision, or a 400", token, got, gotRev, err, prefix)
		}
		clean := key != "" && path.Clean("/"+key) == "/"+key
		if rev != 0 && utf8.ValidString(key) && clean {
			if k, r, err := decodeContinue(encodeContinue(prefix+key, prefix, rev), prefix); err != nil || k != prefix+key || r != rev {
				t.Fatalf("decodeContinue(encodeContinue(%q, %d)) = %q, %d, %v", key, rev, k, r, err)
			}
		}
		w := httptest.NewRecorder()
		ts.s.ServeHTTP(w, httptest.NewRequest("GET", cmPath+"?limit=1&continue="+url.QueryEscape(token), nil))
		if w.Code >= 500 && !(w.Code == http.StatusGatewayTimeout && strings.Contains(w.Body.String(), "Too large resource version")) {
			t.Fatalf("list with continue %q = %d %.300s", token, w.Code, w.Body)
		}
	})
}
