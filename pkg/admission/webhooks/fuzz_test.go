package webhooks

// FuzzDecodeResponse follows a webhook's answer from the body the client
// read to the object the mutating plugin would admit; the decoders it
// passes through have their own differential targets (FuzzDecodePlainV1Review,
// FuzzScanPatchIsDecodePatch, FuzzSpliceJSONPatchIsV4). Its corpus is in
// testdata/fuzz/FuzzDecodeResponse.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/pkg/yamlbound"
)

// maxCopyBytes is the JSON patch copy bound the API server sets for the
// whole process (apiserver.Config.JSONPatchMaxCopyBytes' default).
const maxCopyBytes = 3 << 20

// A webhook's answer decodes, or fails, without a panic; what decodes is
// an answer to the review sent (its uid for v1, patch and patchType
// together and only from a mutating webhook) no larger than proportion
// allows (or yamlbound, for YAML); and its patch, spliced or applied by json-patch v4 under the
// server's copy bound, adds no more than its own size and that bound.
func FuzzDecodeResponse(f *testing.F) {
	const uid = types.UID("u-1")
	review := func(version, fields string) string {
		return `{"apiVersion":"admission.k8s.io/` + version + `","kind":"AdmissionReview","response":{"uid":"u-1","allowed":true` + fields + `}}`
	}
	patched := func(patch string) string {
		return review("v1", `,"patchType":"JSONPatch","patch":"`+base64.StdEncoding.EncodeToString([]byte(patch))+`"`)
	}
	bomb := `[{"op":"add","path":"/metadata/annotations","value":{"z":"` + strings.Repeat("x", 1000) + `"}}`
	for i := range 16 {
		bomb += fmt.Sprintf(`,{"op":"copy","from":"/metadata/annotations","path":"/metadata/annotations/k%d"}`, i)
	}
	for _, seed := range append(plainReviewSeeds,
		patched(`[{"op":"add","path":"/metadata/labels/x","value":"y"}]`), patched(`[{"op":"replace","path":""}]`), patched(`[{"op":"test","path":""}]`),
		patched(bomb+"]"), patched(`[{"op":"move","from":"/spec","path":"/metadata/x"}]`),
		patched(`[{"op":"add","path":"/spec/containers/-","value":`+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+`}]`),
		review("v1", `,"patchType":"JSONPatch","patch":"`+strings.Repeat("A", 64)+`"`), review("v1", `,"status":{"code":99999999999999999999}`),
		review("v1beta1", `,"patch":"W3sib3AiOiJyZW1vdmUiLCJwYXRoIjoiL3NwZWMifV0="`), review("v1", `,"warnings":["\xff\xfe"],"auditAnnotations":{"a":"\u0000"}`),
		"apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nresponse:\n  uid: u-1\n  allowed: true\n",
		"apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nresponse: &r\n  uid: u-1\n  allowed: true\n  warnings: [&w \"long\", *w, *w]\n",
		"k8s\x00\x0a\x26\x0a\x13admission.k8s.io/v1\x12\x0fAdmissionReview", "k8s\x00", strings.Repeat(`{"response":`, 10000),
	) {
		f.Add([]byte(seed), true, false)
	}
	for {
		limit := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
		if limit > 0 && limit <= maxCopyBytes || atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, limit, maxCopyBytes) {
			break
		}
	}
	doc := fastPatchSeedPod()
	f.Fuzz(func(t *testing.T, body []byte, mutating, v1beta1 bool) {
		version := "v1"
		if v1beta1 {
			version = "v1beta1"
		}
		resp, err := decodeResponse(body, version, uid, mutating)
		if err != nil {
			return
		}
		switch hasPatch, hasType := len(resp.Patch) > 0, resp.PatchType != nil; {
		case !v1beta1 && resp.UID != uid:
			t.Fatalf("decodeResponse(%q) answers uid %q, want %q", body, resp.UID, uid)
		case !mutating && (hasPatch || hasType), mutating && hasPatch != hasType:
			t.Fatalf("decodeResponse(%q, mutating %v) = patch %q, patchType %v", body, mutating, resp.Patch, resp.PatchType)
		}
		if out, _ := json.Marshal(resp); len(out) > 32*len(body)+16<<10+yamlbound.MinLimit {
			t.Fatalf("decodeResponse(%.200q): %d bytes in, %d bytes of response", body, len(body), len(out))
		}
		if len(resp.Patch) == 0 {
			return
		}
		patch, err := decodePatch(resp.Patch)
		if err != nil {
			return
		}
		out, spliced := spliceJSONPatch(doc, patch)
		if want, err := applyRecovering(patch, doc); spliced && (err != nil || !bytes.Equal(out, want)) {
			t.Fatalf("patch %s: spliced %s, v4 %s (%v)", resp.Patch, out, want, err)
		} else if !spliced && err == nil {
			out = want
		}
		if limit := len(doc) + 8*len(resp.Patch) + maxCopyBytes + 16<<10; len(out) > limit {
			t.Fatalf("patch %.200s: %d bytes in, %d bytes out (bound %d)", resp.Patch, len(resp.Patch), len(out), limit)
		}
	})
}
