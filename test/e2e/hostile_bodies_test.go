package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

const (
	jsonPatchType  = "application/json-patch+json"
	mergePatchType = "application/merge-patch+json"
	smPatchType    = "application/strategic-merge-patch+json"
	applyPatchType = "application/apply-patch+yaml"
	protobufType   = "application/vnd.kubernetes.protobuf"
	overLimit      = 3<<20 + 1 // one byte over upstream's MaxRequestBodyBytes
)

// patchType is one patch content type and the query it needs.
type patchType struct{ contentType, query string }

var patchTypes = []patchType{
	{jsonPatchType, ""}, {mergePatchType, ""}, {smPatchType, ""}, {applyPatchType, "?fieldManager=hostile"},
}

// patchBody wraps a JSON value (or, for apply, a YAML flow value) so that
// each patch type sets data.key of baseline to it.
func patchBody(contentType, key, value string) []byte {
	switch contentType {
	case jsonPatchType:
		return []byte(`[{"op":"add","path":"/data/` + key + `","value":` + value + `}]`)
	case applyPatchType:
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: baseline\n  namespace: mine\ndata:\n  " + key + ": " + value + "\n")
	}
	return []byte(`{"data":{"` + key + `":` + value + `}}`)
}

// configMap is a ConfigMap named name in mine whose data is the raw JSON
// data.
func configMap(name, data string) []byte {
	return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"mine"},"data":` + data + `}`)
}

func quoted(n int) string { return `"` + strings.Repeat("x", n) + `"` }

func deepJSON(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// manyKeys is a JSON object of n keys whose values are valueLen bytes.
func manyKeys(n, valueLen int) string {
	var b strings.Builder
	v := quoted(valueLen)
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%07d":%s`, i, v)
	}
	b.WriteByte('}')
	return b.String()
}

// aliasBomb is billion laughs: nine levels of nine aliases each.
func aliasBomb(header string) []byte {
	b := header + "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b += n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",") + "]\n"
		prev = n
	}
	return []byte(b)
}

// aliasFanOut stays under YAML's alias limits yet expands 3 KB of apply
// patch into 3 MB of data values.
func aliasFanOut() []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: baseline\n  namespace: mine\n  annotations:\n    seed: &s " + quoted(10000) + "\ndata:\n")
	for i := range 300 {
		fmt.Fprintf(&b, "  k%d: *s\n", i)
	}
	return []byte(b.String())
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

type op = map[string]any

// copyBomb adds a 1000-byte map at /metadata/annotations, then copies it
// into itself copies times: 1000 * 2^copies bytes without upstream's 3 MiB
// bound on copies.
func copyBomb(copies int) []byte {
	ops := []op{{"op": "add", "path": "/metadata/annotations", "value": map[string]string{"seed": strings.Repeat("x", 1000)}}}
	for i := range copies {
		ops = append(ops, op{"op": "copy", "from": "/metadata/annotations", "path": fmt.Sprintf("/metadata/annotations/c%d", i)})
	}
	return mustJSON(ops)
}

// copyFanOut copies one 1000-byte value 9998 times (10 MB, inside the
// 10000-operation limit).
func copyFanOut() []byte {
	ops := []op{{"op": "add", "path": "/data/seed", "value": strings.Repeat("x", 1000)}}
	for i := range 9998 {
		ops = append(ops, op{"op": "copy", "from": "/data/seed", "path": fmt.Sprintf("/data/c%d", i)})
	}
	return mustJSON(ops)
}

// movePingPong moves a 500 KB value back and forth 9997 times, then fails a
// test so that nothing is stored.
func movePingPong() []byte {
	ops := []op{{"op": "add", "path": "/data/ping", "value": strings.Repeat("x", 500<<10)}}
	for i := range 9997 {
		from, to := "/data/ping", "/data/pong"
		if i%2 == 1 {
			from, to = to, from
		}
		ops = append(ops, op{"op": "move", "from": from, "path": to})
	}
	return mustJSON(append(ops, op{"op": "test", "path": "/data/absent", "value": "x"}))
}

// tooManyOps is 10001 harmless operations, one over upstream's limit.
func tooManyOps() []byte {
	ops := make([]op, 10001)
	for i := range ops {
		ops[i] = op{"op": "test", "path": "/metadata/name", "value": "baseline"}
	}
	return mustJSON(ops)
}

func bodyProbe(name, method, path, contentType string, body []byte, w want) probe {
	return mallory(probe{name: name, method: method, path: path, contentType: contentType, body: body, want: w})
}

// bodyProbes are adversarial bodies for mallory's configmaps endpoints. What
// must be refused goes to baseline (or creates hostile-refused-*); what
// upstream might accept goes to scratch (or creates hostile-may-*).
func bodyProbes() []probe {
	big := `{"big":` + quoted(overLimit) + `}`
	pbGarbage := append([]byte("k8s\x00"), []byte("\x0a\xff\xff\xff\xff\xff\xff\xff\xff\x7f garbage")...)
	invalidBetween := []byte(`{"apiVersion":"v1",` + "\xff\xfe" + `"kind":"ConfigMap","metadata":{"name":"baseline"}}`)
	dup := `{"a":"1","a":"2"}`
	ps := []probe{
		bodyProbe("create: over 3 MiB", "POST", cmPath, "application/json", configMap("hostile-refused-big", big), code(413)),
		bodyProbe("create: over 3 MiB as YAML", "POST", cmPath, "application/yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hostile-refused-yaml\ndata:\n  big: "+quoted(overLimit)+"\n"), code(413)),
		bodyProbe("create: over 3 MiB as protobuf", "POST", cmPath, protobufType, append([]byte("k8s\x00"), make([]byte, overLimit)...), code(413)),
		bodyProbe("create: a map of 1M keys (12 MB)", "POST", cmPath, "application/json", configMap("hostile-refused-keys", manyKeys(1_000_000, 0)), code(413)),
		bodyProbe("create: 20k keys, 1.2 MB of values", "POST", cmPath, "application/json", configMap("hostile-refused-keys", manyKeys(20_000, 60)), any4xx),
		bodyProbe("create: 100k-deep JSON", "POST", cmPath, "application/json", configMap("hostile-refused-deep", `{"a":`+deepJSON(100_000)+`}`), code(400)),
		bodyProbe("create: 100k-deep YAML", "POST", cmPath, "application/yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hostile-refused-deep\ndata:\n  a: "+deepJSON(100_000)+"\n"), code(400)),
		bodyProbe("create: YAML alias bomb", "POST", cmPath, "application/yaml", aliasBomb("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hostile-refused-bomb\n"), code(400)),
		bodyProbe("create: invalid UTF-8 between tokens", "POST", cmPath, "application/json", invalidBetween, code(400)),
		bodyProbe("create: invalid UTF-8 in YAML", "POST", cmPath, "application/yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hostile-refused-utf8\ndata:\n  a: \xff\xfe\n"), code(400)),
		bodyProbe("create: invalid UTF-8 in a data key", "POST", cmPath, "application/json", configMap("hostile-refused-utf8", "{\"\xff\xfe\":\"v\"}"), any4xx),
		bodyProbe("create: truncated protobuf", "POST", cmPath, protobufType, pbGarbage, code(400)),
		bodyProbe("create: protobuf magic alone", "POST", cmPath, protobufType, []byte("k8s\x00"), code(400)),
		bodyProbe("create: empty body", "POST", cmPath, "application/json", []byte{}, code(400)),
		bodyProbe("create: empty body, no content type", "POST", cmPath, "", []byte{}, code(400)),
		bodyProbe("create: duplicate keys, fieldValidation=Strict", "POST", cmPath+"?fieldValidation=Strict", "application/json", configMap("hostile-refused-dup", dup), code(400)),
		bodyProbe("create: 1e400 as metadata.generation", "POST", cmPath, "application/json", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"hostile-refused-num","generation":1e400}}`), code(400)),
		bodyProbe("create: 100k-digit metadata.generation", "POST", cmPath, "application/json", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"hostile-refused-num","generation":`+strings.Repeat("9", 100_000)+`}}`), code(400)),
		bodyProbe("create: a number as a data value", "POST", cmPath, "application/json", configMap("hostile-refused-num", `{"a":1e400}`), code(400)),
		bodyProbe("create: JSON null", "POST", cmPath, "application/json", []byte("null"), any4xx),
		bodyProbe("create: a JSON array", "POST", cmPath, "application/json", []byte(`[1,2,3]`), any4xx),
		bodyProbe("update: over 3 MiB", "PUT", baselinePath, "application/json", configMap("baseline", big), code(413)),
		bodyProbe("update: 100k-deep JSON", "PUT", baselinePath, "application/json", configMap("baseline", `{"a":`+deepJSON(100_000)+`}`), code(400)),
		bodyProbe("update: invalid UTF-8 between tokens", "PUT", baselinePath, "application/json", invalidBetween, code(400)),
		bodyProbe("update: empty body", "PUT", baselinePath, "application/json", []byte{}, code(400)),
		bodyProbe("update: truncated protobuf", "PUT", baselinePath, protobufType, pbGarbage, code(400)),
		bodyProbe("update: duplicate keys, fieldValidation=Strict", "PUT", baselinePath+"?fieldValidation=Strict", "application/json", configMap("baseline", dup), code(400)),
		bodyProbe("update: 20k keys, 1.2 MB of values", "PUT", baselinePath, "application/json", configMap("baseline", manyKeys(20_000, 60)), any4xx),
		bodyProbe("update: invalid UTF-8 in a data key", "PUT", baselinePath, "application/json", configMap("baseline", "{\"\xff\xfe\":\"v\"}"), any4xx),
		bodyProbe("update: YAML alias bomb", "PUT", baselinePath, "application/yaml", aliasBomb("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: baseline\n"), code(400)),
		bodyProbe("json patch: 16 copies of a 1000-byte map into itself", "PATCH", baselinePath, jsonPatchType, copyBomb(16), code(422)),
		bodyProbe("json patch: 18 copies of a 1000-byte map into itself", "PATCH", baselinePath, jsonPatchType, copyBomb(18), code(422)),
		bodyProbe("json patch: 9998 copies of a 1000-byte value", "PATCH", baselinePath, jsonPatchType, copyFanOut(), code(422)),
		bodyProbe("json patch: 9997 moves of 500 KB, then a failing test", "PATCH", baselinePath, jsonPatchType, movePingPong(), code(422)),
		bodyProbe("json patch: 10001 operations", "PATCH", baselinePath, jsonPatchType, tooManyOps(), code(413)),
		bodyProbe("json patch: 20 copies of the whole object", "PATCH", baselinePath, jsonPatchType, mustJSON(slices.Repeat([]op{{"op": "copy", "from": "", "path": "/metadata/annotations/x"}}, 20)), any4xx),
		bodyProbe("json patch: duplicate keys, fieldValidation=Strict", "PATCH", baselinePath+"?fieldValidation=Strict", jsonPatchType, []byte(`[{"op":"add","path":"/data/pwned","value":"1","value":"2"}]`), code(422)),
		bodyProbe("merge patch: duplicate keys, fieldValidation=Strict", "PATCH", baselinePath+"?fieldValidation=Strict", mergePatchType, []byte(`{"data":{"pwned":"1","pwned":"2"}}`), code(422)),
		bodyProbe("strategic merge patch: duplicate keys, fieldValidation=Strict", "PATCH", baselinePath+"?fieldValidation=Strict", smPatchType, []byte(`{"data":{"pwned":"1","pwned":"2"}}`), code(422)),
		bodyProbe("apply: duplicate keys, fieldValidation=Strict", "PATCH", baselinePath+"?fieldManager=hostile&fieldValidation=Strict", applyPatchType, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: baseline\ndata:\n  pwned: a\n  pwned: b\n"), code(400)),
		bodyProbe("apply: YAML alias bomb", "PATCH", baselinePath+"?fieldManager=hostile", applyPatchType, aliasBomb("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: baseline\n"), code(400)),
		bodyProbe("apply: aliases expanding 3 KB into 3 MB of values", "PATCH", baselinePath+"?fieldManager=hostile", applyPatchType, aliasFanOut(), any4xx),
		bodyProbe("merge patch: 20k keys, 1.2 MB of values", "PATCH", baselinePath, mergePatchType, []byte(`{"data":`+manyKeys(20_000, 60)+`}`), any4xx),
		bodyProbe("delete: over 3 MiB of options", "DELETE", baselinePath, "application/json", []byte(`{"kind":"DeleteOptions","apiVersion":"v1","dryRun":[`+quoted(overLimit)+`]}`), code(413)),
		bodyProbe("delete: malformed options", "DELETE", baselinePath, "application/json", []byte(`{"kind":`), code(400)),
		bodyProbe("delete: 100k-deep options", "DELETE", baselinePath, "application/json", []byte(`{"preconditions":`+deepJSON(100_000)+`}`), code(400)),
		bodyProbe("delete: truncated protobuf options", "DELETE", baselinePath, protobufType, pbGarbage, code(400)),
		bodyProbe("delete: options as text/plain", "DELETE", baselinePath, "text/plain", []byte("now"), code(415)),
		bodyProbe("delete: a wrong uid precondition", "DELETE", baselinePath, "application/json", []byte(`{"preconditions":{"uid":"not-the-uid"}}`), code(409)),
		bodyProbe("delete: propagationPolicy bogus in the body", "DELETE", baselinePath, "application/json", []byte(`{"propagationPolicy":"bogus"}`), code(422)),
		bodyProbe("delete: dryRun bogus in the body", "DELETE", baselinePath, "application/json", []byte(`{"dryRun":["bogus"]}`), code(422)),
		bodyProbe("delete: gracePeriodSeconds a string", "DELETE", baselinePath, "application/json", []byte(`{"gracePeriodSeconds":"soon"}`), code(400)),
		bodyProbe("self review: over 3 MiB", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "application/json", []byte(`{"spec":{"nonResourceAttributes":{"path":`+quoted(overLimit)+`}}}`), code(413)),
		bodyProbe("self review: 100k-deep JSON", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "application/json", []byte(`{"spec":`+deepJSON(100_000)+`}`), code(400)),
	}
	chunked := bodyProbe("create: over 3 MiB, chunked", "POST", cmPath, "application/json", configMap("hostile-refused-big", big), code(413))
	chunked.chunked = true
	ps = append(ps, chunked)
	return append(append(ps, contentTypeAndPatchProbes()...), harmlessProbes()...)
}

// contentTypeAndPatchProbes: unsupported content types (415), then each
// patch type over 3 MiB, 100k deep, not UTF-8 and empty.
func contentTypeAndPatchProbes() []probe {
	var ps []probe
	for i, ct := range []string{"text/plain", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", jsonPatchType, applyPatchType} {
		ps = append(ps, bodyProbe("create: content type "+ct, "POST", cmPath, ct, configMap(fmt.Sprintf("hostile-refused-ct%d", i), `{}`), code(415)))
	}
	ps = append(ps, bodyProbe("update: content type text/plain", "PUT", baselinePath, "text/plain", configMap("baseline", `{"a":"pwned"}`), code(415)))
	ps = append(ps, bodyProbe("update: content type "+mergePatchType, "PUT", baselinePath, mergePatchType, configMap("baseline", `{"a":"pwned"}`), code(415)))
	for _, ct := range []string{"application/json", "application/yaml", "text/plain", protobufType, ""} {
		ps = append(ps, bodyProbe(fmt.Sprintf("patch: content type %q", ct), "PATCH", baselinePath, ct, []byte(`{"data":{"a":"pwned"}}`), code(415)))
	}
	for _, pt := range patchTypes {
		name := strings.TrimPrefix(pt.contentType, "application/")
		path := baselinePath + pt.query
		deep, invalid := deepJSON(100_000), "\xff\xfe"
		if pt.contentType != applyPatchType {
			invalid = `{"data":` + "\xff" + `}`
		}
		ps = append(ps,
			bodyProbe(name+": over 3 MiB", "PATCH", path, pt.contentType, patchBody(pt.contentType, "big", quoted(overLimit)), code(413)),
			bodyProbe(name+": over 3 MiB, chunked", "PATCH", path, pt.contentType, patchBody(pt.contentType, "big", quoted(overLimit)), code(413)),
			bodyProbe(name+": 100k-deep", "PATCH", path, pt.contentType, patchBody(pt.contentType, "deep", deep), code(400)),
			bodyProbe(name+": invalid UTF-8", "PATCH", path, pt.contentType, []byte(invalid), code(400)),
		)
		ps[len(ps)-3].chunked = true
		if pt.contentType != applyPatchType {
			ps = append(ps, bodyProbe(name+": empty body", "PATCH", path, pt.contentType, []byte{}, code(400)))
		}
	}
	return ps
}

// harmlessProbes are what upstream may well accept: they go to scratch or
// create hostile-may-* objects.
func harmlessProbes() []probe {
	return []probe{
		bodyProbe("create: invalid UTF-8 in a data value", "POST", cmPath, "application/json", configMap("hostile-may-utf8", "{\"a\":\"\xff\xfe\"}"), no5xx),
		bodyProbe("create: duplicate keys", "POST", cmPath, "application/json", configMap("hostile-may-dup", `{"a":"1","a":"2"}`), no5xx),
		bodyProbe("apply: empty body", "PATCH", scratchPath+"?fieldManager=hostile", applyPatchType, []byte{}, no5xx),
		bodyProbe("strategic merge patch: $setElementOrder of 100k finalizers", "PATCH", scratchPath, smPatchType, mustJSON(op{"metadata": op{"$setElementOrder/finalizers": slices.Repeat([]string{"example.com/f"}, 100_000)}}), no5xx),
		bodyProbe("strategic merge patch: $deleteFromPrimitiveList of 100k finalizers", "PATCH", scratchPath, smPatchType, mustJSON(op{"metadata": op{"$deleteFromPrimitiveList/finalizers": slices.Repeat([]string{"example.com/f"}, 100_000)}}), no5xx),
		bodyProbe("strategic merge patch: $retainKeys in data", "PATCH", scratchPath, smPatchType, []byte(`{"data":{"$retainKeys":["a"],"b":"2"}}`), no5xx),
		bodyProbe("strategic merge patch: $patch replace at the root", "PATCH", scratchPath, smPatchType, []byte(`{"$patch":"replace"}`), no5xx),
		bodyProbe("apply: content type application/apply-patch+cbor", "PATCH", scratchPath+"?fieldManager=hostile", "application/apply-patch+cbor", []byte{0xa0}, any4xx),
	}
}

// paramProbes are adversarial query parameters on mallory's list, watch,
// get, delete, create, update and patch of configmaps. Decoding errors are
// 400 and option validation 422 in upstream's handlers; the codes below are
// what the real kube-apiserver 1.37.2 answered (test/sidebyside-probes.sh),
// including its 500 for a watch or get at a resourceVersion that does not
// parse (its storage's error, which the handlers do not convert).
func paramProbes() []probe {
	huge := "99999999999999999999"      // overflows int64 and uint64
	var labelTerms, fieldTerms []string // 100 KiB each
	for i := 0; len(strings.Join(labelTerms, ",")) < 100<<10; i++ {
		labelTerms = append(labelTerms, fmt.Sprintf("k%d=v", i))
	}
	for i := 0; len(strings.Join(fieldTerms, ",")) < 100<<10; i++ {
		fieldTerms = append(fieldTerms, fmt.Sprintf("metadata.name!=n%d", i))
	}
	const storageRV = "list: storage.ValidateListOptions' 400; watch: the cacher's error, a 500"
	listCases := []struct {
		query       string
		list, watch want
		upstream    string
	}{
		{"resourceVersion=garbage", code(400), code(500), storageRV},
		{"resourceVersion=-1", code(400), code(500), storageRV},
		{"resourceVersion=" + huge, code(400), code(500), storageRV},
		{"resourceVersionMatch=bogus", code(422), code(422), ""},
		{"resourceVersion=0&resourceVersionMatch=bogus", code(422), code(422), ""},
		{"resourceVersionMatch=Exact", code(422), code(422), ""},
		{"timeoutSeconds=-1", code(200), no5xx, "a list ignores timeoutSeconds; a watch gets an expired context"},
		{"timeoutSeconds=garbage", code(400), code(400), ""},
		{"timeoutSeconds=" + huge, code(400), code(400), ""},
		{"timeoutSeconds=9223372036854775807", code(200), no5xx, "a list ignores timeoutSeconds; a watch's duration overflows to -1s"},
		{"limit=-1", code(200), code(200), "a limit <= 0 is no limit"},
		{"limit=0", code(200), code(200), ""},
		{"limit=" + huge, code(400), code(400), ""},
		{"limit=garbage", code(400), code(400), ""},
		{"limit=9223372036854775807", code(200), code(200), ""},
		{"continue=garbage", code(400), code(422), "list: invalid continue token; watch: defaulted to a watch list, which forbids continue"},
		{"continue=" + url.QueryEscape(`eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk5OTk5OTk5OTk5LCJzdGFydCI6Ii4uLy4uLyJ9`), code(400), code(422), "as continue=garbage"},
		{"labelSelector=" + url.QueryEscape("!!!==("), code(400), code(400), ""},
		{"labelSelector=" + url.QueryEscape("a="+strings.Repeat("v", 100<<10)), code(400), code(400), ""},
		{"labelSelector=" + url.QueryEscape(strings.Join(labelTerms, ",")), no5xx, no5xx, ""},
		{"fieldSelector=metadata.name", code(400), code(400), ""},
		{"fieldSelector=spec.bogus%3Dx", code(400), code(400), ""},
		{"fieldSelector=" + url.QueryEscape("metadata.name="+strings.Repeat("a", 100<<10)), no5xx, no5xx, ""},
		{"fieldSelector=" + url.QueryEscape(strings.Join(fieldTerms, ",")), no5xx, no5xx, ""},
		// a bool parameter is true unless absent, "0" or "false"
		{"sendInitialEvents=garbage", code(422), code(422), "true: forbidden for a list, and for a watch without resourceVersionMatch=NotOlderThan"},
		{"allowWatchBookmarks=garbage", code(200), code(200), "true"},
		{"timeout=garbage", code(400), no5xx, "the deadline filter's 400, but a watch is long-running and skips it"},
		{"fieldValidation=bogus&dryRun=bogus&propagationPolicy=bogus", no5xx, no5xx, ""},
	}
	var ps []probe
	for _, c := range listCases {
		ps = append(ps,
			mallory(probe{method: "GET", path: cmPath + "?" + c.query, want: c.list, upstream: c.upstream}),
			mallory(probe{method: "GET", path: cmPath + "?watch=true&" + c.query, want: c.watch, watch: true, upstream: c.upstream}))
	}
	return append(ps, objectParamProbes()...)
}

// objectParamProbes are bad parameters on get, delete, create, update and
// patch: what must be refused goes to baseline.
func objectParamProbes() []probe {
	huge := "99999999999999999999"
	var ps []probe
	getCases := []struct {
		query    string
		want     want
		upstream string
	}{
		{"resourceVersion=garbage", code(500), "storage's InvalidError is not converted for a get"},
		{"resourceVersion=-1", code(500), "as resourceVersion=garbage"},
		{"resourceVersion=" + huge, code(500), "as resourceVersion=garbage"},
		{"resourceVersion=0&resourceVersionMatch=bogus", no5xx, ""},
		{"timeout=garbage", code(400), ""},
		{"watch=garbage", code(200), "a get: GetOptions has no watch"},
		{"watch=true", code(200), "a get: GetOptions has no watch"},
		{"export=true", code(400), ""},
		{"export=garbage", code(400), "garbage is true"},
	}
	for _, c := range getCases {
		ps = append(ps, mallory(probe{method: "GET", path: baselinePath + "?" + c.query, want: c.want, upstream: c.upstream}))
	}
	deletes := []struct {
		query string
		want  want
	}{
		{"dryRun=bogus", code(422)},
		{"propagationPolicy=bogus", code(422)},
		{"gracePeriodSeconds=soon", code(400)},
		{"gracePeriodSeconds=" + huge, code(400)},
		{"orphanDependents=garbage&propagationPolicy=Background", code(422)}, // garbage is true
		{"orphanDependents=true&propagationPolicy=Orphan", code(422)},
		{"timeout=garbage", code(400)},
		{"dryRun=All", no5xx}, // nothing is deleted
	}
	for _, d := range deletes {
		ps = append(ps, mallory(probe{method: "DELETE", path: baselinePath + "?" + d.query, want: d.want}))
	}
	writes := []struct {
		query string
		want  want
	}{
		{"fieldValidation=bogus", code(422)},
		{"dryRun=bogus", code(422)},
		{"fieldManager=" + strings.Repeat("m", 200), code(422)},
		{"fieldManager=%01%02", code(422)},
		{"timeout=garbage", code(400)},
		{"dryRun=All", no5xx}, // nothing is stored
	}
	for _, w := range writes {
		ps = append(ps,
			mallory(probe{method: "POST", path: cmPath + "?" + w.query, contentType: "application/json", body: configMap("hostile-refused-params", `{"a":"1"}`), want: w.want}),
			mallory(probe{method: "PUT", path: baselinePath + "?" + w.query, contentType: "application/json", body: configMap("baseline", `{"a":"pwned"}`), want: w.want}),
			mallory(probe{method: "PATCH", path: baselinePath + "?" + w.query, contentType: mergePatchType, body: []byte(`{"data":{"a":"pwned"}}`), want: w.want}))
	}
	return append(ps,
		mallory(probe{method: "PATCH", path: baselinePath + "?force=true", contentType: mergePatchType, body: []byte(`{"data":{"a":"pwned"}}`), want: code(422)}),
		mallory(probe{method: "PATCH", path: baselinePath + "?force=garbage", contentType: mergePatchType, body: []byte(`{"data":{"a":"pwned"}}`), want: code(422)}), // garbage is true
		mallory(probe{method: "PATCH", path: baselinePath, contentType: applyPatchType, body: patchBody(applyPatchType, "pwned", "x"), want: code(422)}),
		// a refused request with a bad timeout: the deadline filter answers
		// before authentication and authorization
		mallory(probe{method: "GET", path: "/api/v1/nodes?timeout=garbage", want: code(400)}),
		probe{method: "GET", path: cmPath + "?timeout=garbage", auth: "Bearer " + garbageToken, want: code(400)},
		// list options on a collection she may not list: 403 first
		mallory(probe{method: "GET", path: "/api/v1/namespaces/other/configmaps?limit=garbage&labelSelector=!!!", want: code(403)}),
		mallory(probe{method: "GET", path: "/api/v1/namespaces/other/configmaps?watch=garbage", want: code(403)}),
		mallory(probe{method: http.MethodDelete, path: cmPath + "?propagationPolicy=bogus", want: code(403)}), // deletecollection
	)
}
