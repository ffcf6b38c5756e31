package samplewebhook

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

const (
	rPods   = `{"group":"","version":"v1","resource":"pods"}`
	rCM     = `{"group":"","version":"v1","resource":"configmaps"}`
	rDeploy = `{"group":"apps","version":"v1","resource":"deployments"}`
	rCRDv1  = `{"group":"apiextensions.k8s.io","version":"v1","resource":"customresourcedefinitions"}`
	rCRDv1b = `{"group":"apiextensions.k8s.io","version":"v1beta1","resource":"customresourcedefinitions"}`
	rCR     = `{"group":"g","version":"v1","resource":"ks"}`

	pStage1 = `[{"op":"add","path":"/data/mutation-stage-1","value":"yes"}]`
	pStage2 = `[{"op":"add","path":"/data/mutation-stage-2","value":"yes"}]`
	attach  = `{"kind":"PodAttachOptions","apiVersion":"v1","stdin":true,"stdout":true,"stderr":true,"container":"container1"}`
)

// vector is one direct HTTP request to an endpoint and the answer upstream's
// webhook (k8s.io/kubernetes/test/images/agnhost/webhook/) gives it.
type vector struct {
	id, path            string
	resource, sub, name string
	op, object, old     string
	want                string // allow | msg:X | msg^X (prefix) | reason:X | patch:P | abort | raw:JSON
	sidecarImage        string
	deadline            time.Duration
}

func (v vector) request() string {
	var b strings.Builder
	b.WriteString(`{"uid":"u-1","resource":` + or(v.resource, rPods) + `,"subResource":"` + v.sub + `","name":"` + v.name +
		`","namespace":"ns","operation":"` + or(v.op, "CREATE") + `","userInfo":{}`)
	if v.object != "" {
		b.WriteString(`,"object":` + v.object)
	}
	if v.old != "" {
		b.WriteString(`,"oldObject":` + v.old)
	}
	b.WriteString("}")
	return b.String()
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func labels(l string) string     { return `{"metadata":{"labels":` + l + `}}` }
func data(d string) string       { return `{"data":` + d + `}` }
func containers(c string) string { return `{"spec":{"containers":` + c + `}}` }

var vectors = []vector{
	{id: "D1", path: "/always-deny", want: "msg:this webhook denies all requests"},
	{id: "L1", path: "/add-label", object: `{"metadata":{"name":"x"}}`, want: `patch:[{"op":"add","path":"/metadata/labels","value":{"added-label":"yes"}}]`},
	{id: "L2", path: "/add-label", object: labels(`{"a":"b"}`), want: `patch:[{"op":"add","path":"/metadata/labels/added-label","value":"yes"}]`},
	{id: "L3", path: "/add-label", object: labels(`{"added-label":"no"}`), want: `patch:[{"op":"replace","path":"/metadata/labels/added-label","value":"yes"}]`},
	{id: "L4", path: "/add-label", object: labels(`{"added-label":"yes"}`), want: "allow"},
	{id: "L5", path: "/add-label", op: "DELETE", object: "null", want: "msg:unexpected end of JSON input"},
	{id: "L6", path: "/add-label", object: `{"Metadata":{"Labels":{"added-label":"no"}}}`, want: `patch:[{"op":"replace","path":"/metadata/labels/added-label","value":"yes"}]`},
	{id: "P1", path: "/pods", object: `{"metadata":{"labels":{"webhook-e2e-test":"webhook-disallow"}},"spec":{"containers":[{"name":"webhook-disallow"}]}}`,
		want: "msg:the pod contains unwanted label; the pod contains unwanted container name;"},
	{id: "P2", path: "/pods", object: labels(`{"webhook-e2e-test":"webhook-disallow"}`), want: "msg:the pod contains unwanted label;"},
	{id: "P3", path: "/pods", object: containers(`[{"name":"x-webhook-disallow-y"}]`), want: "msg:the pod contains unwanted container name;"},
	{id: "P4", path: "/pods", object: containers(`[{"name":"webhook-disallow"},{"name":"ok"},{"name":"webhook-disallow-2"}]`),
		want: "msg:the pod contains unwanted container name; the pod contains unwanted container name;"},
	{id: "P5", path: "/pods", object: `{"spec":{"initContainers":[{"name":"webhook-disallow"}]}}`, want: "allow"},
	{id: "P6", path: "/pods", object: labels(`{"webhook-e2e-test":"wait-forever"}`), want: "abort", deadline: 200 * time.Millisecond},
	{id: "P7", path: "/pods", object: labels(`{"webhook-e2e-test":"webhook-allow"}`), want: "allow"},
	{id: "P8", path: "/pods", resource: rDeploy, object: "{}", want: "msg:expect resource to be { v1 pods}"},
	{id: "P9", path: "/pods", op: "DELETE", object: "null", want: "allow"},
	{id: "P10", path: "/pods", object: labels(`{"a":1}`), want: "msg^json: cannot unmarshal number"},
	{id: "T1", path: "/pods/attach", name: "other", resource: rCM, want: "allow"},
	{id: "T2", path: "/pods/attach", name: "to-be-attached-pod", sub: "attach", op: "CONNECT", object: attach,
		want: "msg:attaching to pod 'to-be-attached-pod' is not allowed"},
	{id: "T3", path: "/pods/attach", name: "to-be-attached-pod", sub: "attach", op: "CONNECT", object: strings.Replace(attach, `"stdin":true`, `"stdin":false`, 1), want: "allow"},
	{id: "T4", path: "/pods/attach", name: "to-be-attached-pod", sub: "attach", op: "CONNECT", object: strings.Replace(attach, "container1", "container2", 1), want: "allow"},
	{id: "T5", path: "/pods/attach", name: "to-be-attached-pod", sub: "exec", op: "CONNECT", object: attach, want: "msg:expect subresource to be attach, got exec"},
	{id: "T6", path: "/pods/attach", name: "to-be-attached-pod", resource: rCM, sub: "attach", op: "CONNECT", object: attach,
		want: "msg:expect resource to be { v1 pods}, got { v1 configmaps}"},
	{id: "M1", path: "/mutating-pods", object: `{"metadata":{"name":"webhook-to-be-mutated"},"spec":{"containers":[{"name":"example","image":"pause"}]}}`,
		want: `patch:[{"op":"add","path":"/spec/initContainers","value":[{"image":"webhook-added-image","name":"webhook-added-init-container","resources":{}}]}]`},
	{id: "M2", path: "/mutating-pods", object: `{"metadata":{"name":"webhook-to-be-mutated"},"spec":{"initContainers":[{"name":"webhook-added-init-container"}],"containers":[{"name":"example"}]}}`, want: "allow"},
	{id: "M3", path: "/mutating-pods", object: `{"metadata":{"name":"other"},"spec":{"containers":[{"name":"example"}]}}`, want: "allow"},
	{id: "M4", path: "/mutating-pods", resource: rCM, object: "{}", want: "abort"},
	{id: "S1", path: "/mutating-pods-sidecar", object: "{}",
		want: `raw:{"uid":"u-1","allowed":false,"status":{"metadata":{},"status":"Failure","message":"No image specified by the sidecar-image parameter","code":500}}`},
	{id: "S1 any resource", path: "/mutating-pods-sidecar", resource: rCM, object: "{}",
		want: `raw:{"uid":"u-1","allowed":false,"status":{"metadata":{},"status":"Failure","message":"No image specified by the sidecar-image parameter","code":500}}`},
	{id: "S2", path: "/mutating-pods-sidecar", sidecarImage: "registry.k8s.io/pause:3.10", object: containers(`[{"name":"c"}]`),
		want: `patch:[{"op":"add","path":"/spec/containers/-","value":{"image":"registry.k8s.io/pause:3.10","name":"webhook-added-sidecar","resources":{}}}]`},
	{id: "S3", path: "/mutating-pods-sidecar", sidecarImage: "registry.k8s.io/pause:3.10", object: containers(`[{"name":"c"},{"name":"webhook-added-sidecar"}]`), want: "allow"},
	{id: "S4", path: "/mutating-pods-sidecar", sidecarImage: "registry.k8s.io/pause:3.10", resource: rCM, object: "{}", want: "abort"},
	{id: "C1", path: "/configmaps", resource: rCM, object: data(`{"webhook-e2e-test":"webhook-disallow"}`), want: "reason:the configmap contains unwanted key and value"},
	{id: "C2", path: "/configmaps", resource: rCM, op: "UPDATE", object: data(`{"webhook-e2e-test":"webhook-disallow"}`), want: "reason:the configmap contains unwanted key and value"},
	{id: "C3", path: "/configmaps", resource: rCM, op: "DELETE", object: "null", old: data(`{"webhook-e2e-test":"webhook-nondeletable"}`),
		want: "reason:the configmap cannot be deleted because it contains unwanted key and value"},
	{id: "C4", path: "/configmaps", resource: rCM, op: "DELETE", old: data(`{"webhook-e2e-test":"webhook-disallow"}`), want: "allow"},
	{id: "C5", path: "/configmaps", resource: rCM, object: data(`{"webhook-e2e-test":"webhook-nondeletable"}`), want: "allow"},
	{id: "C6", path: "/configmaps", resource: rCM, op: "UPDATE", object: data(`{"admit":"this"}`), old: data(`{"webhook-e2e-test":"webhook-disallow"}`), want: "allow"},
	{id: "C7", path: "/configmaps", resource: rPods, object: "{}", want: "abort"},
	{id: "MC1", path: "/mutating-configmaps", resource: rCM, object: data(`{"mutation-start":"yes"}`), want: "patch:" + pStage1},
	{id: "MC2", path: "/mutating-configmaps", resource: rCM, object: data(`{"mutation-start":"yes","mutation-stage-1":"yes"}`), want: "patch:" + pStage2},
	{id: "MC3", path: "/mutating-configmaps", resource: rCM, object: data(`{"mutation-start":"yes","mutation-stage-1":"yes","mutation-stage-2":"yes"}`), want: "patch:" + pStage2},
	{id: "MC4", path: "/mutating-configmaps", resource: rCM, object: data(`{"mutation-start":"no"}`), want: "allow"},
	{id: "MC5", path: "/mutating-configmaps", resource: rPods, object: "{}", want: "abort"},
	{id: "CR1", path: "/custom-resource", resource: rCR, object: `{"apiVersion":"g/v1","kind":"K","metadata":{"name":"a"},"data":{"webhook-e2e-test":"webhook-disallow"}}`,
		want: "reason:the custom resource contains unwanted data"},
	{id: "CR2", path: "/custom-resource", resource: rCR, op: "DELETE", old: data(`{"webhook-e2e-test":"webhook-nondeletable"}`),
		want: "reason:the custom resource cannot be deleted because it contains unwanted key and value"},
	{id: "CR3", path: "/custom-resource", resource: rCR, op: "UPDATE", object: data(`{"webhook-e2e-test":"webhook-allow"}`), want: "allow"},
	{id: "CR4", path: "/custom-resource", resource: rCR, object: data(`{"count":1}`), want: "msg^json: cannot unmarshal number"},
	{id: "CR5", path: "/custom-resource", resource: rCR, object: `{"DATA":{"webhook-e2e-test":"webhook-disallow"}}`, want: "reason:the custom resource contains unwanted data"},
	{id: "CR top-level labels", path: "/custom-resource", resource: rCR, object: `{"labels":"x"}`, want: "msg^json: cannot unmarshal string"},
	{id: "MR1", path: "/mutating-custom-resource", resource: rCR, object: data(`{"mutation-start":"yes"}`), want: "patch:" + pStage1},
	{id: "MR2", path: "/mutating-custom-resource", resource: rCR, object: data(`{"mutation-start":"yes","mutation-stage-1":"yes"}`), want: "patch:" + pStage2},
	{id: "MR3", path: "/mutating-custom-resource", resource: rCR, object: "null", want: "msg:unexpected end of JSON input"},
	{id: "K1", path: "/crd", resource: rCRDv1, object: labels(`{"webhook-e2e-test":"webhook-disallow"}`), want: "msg:the crd contains unwanted label"},
	{id: "K2", path: "/crd", resource: rCRDv1b, object: labels(`{"webhook-e2e-test":"webhook-disallow"}`), want: "msg:the crd contains unwanted label"},
	{id: "K3", path: "/crd", resource: rPods, object: "{}",
		want: "msg:expect resource to be one of [{apiextensions.k8s.io v1beta1 customresourcedefinitions}, {apiextensions.k8s.io v1 customresourcedefinitions}] but got { v1 pods}"},
	{id: "K4", path: "/crd", resource: rCRDv1, object: labels(`{"webhook-e2e-test":"webhook-allow"}`), want: "allow"},
	{id: "K DELETE", path: "/crd", resource: rCRDv1, op: "DELETE", want: "allow"},
}

func TestEndpoints(t *testing.T) {
	for _, version := range []string{"v1", "v1beta1"} {
		for _, v := range vectors {
			t.Run(version+"/"+v.id, func(t *testing.T) {
				h := NewHandler(Config{SidecarImage: v.sidecarImage})
				ctx := context.Background()
				if v.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, v.deadline)
					defer cancel()
				}
				got := call(ctx, h, "POST", v.path, "application/json", review(version, v.request()))
				checkAnswer(t, version, v, got)
			})
		}
	}
}

// checkAnswer compares a response with the vector's expectation; patches
// are compared by meaning, as the API server parses them.
func checkAnswer(t *testing.T, version string, v vector, got answer) {
	t.Helper()
	if v.want == "abort" {
		if !got.aborted {
			t.Errorf("%s: answered %d %s, want no answer", v.id, got.code, got.body)
		}
		return
	}
	if got.aborted || got.code != 200 || got.contentType != "application/json" {
		t.Fatalf("%s: answer %+v, want 200 application/json", v.id, got)
	}
	var review struct {
		APIVersion string          `json:"apiVersion"`
		Response   json.RawMessage `json:"response"`
	}
	if err := json.Unmarshal([]byte(got.body), &review); err != nil || review.APIVersion != "admission.k8s.io/"+version {
		t.Fatalf("%s: body %s: %v, want a %s review", v.id, got.body, err, version)
	}
	resp := string(review.Response)
	kind, arg, _ := strings.Cut(v.want, ":")
	if strings.HasPrefix(v.want, "msg^") {
		kind, arg = "msg^", strings.TrimPrefix(v.want, "msg^")
	}
	denied := `{"uid":"u-1","allowed":false,"status":{"metadata":{},`
	switch kind {
	case "allow":
		check(t, v.id, resp, `{"uid":"u-1","allowed":true}`)
	case "raw":
		check(t, v.id, resp, arg)
	case "msg":
		check(t, v.id, resp, denied+`"message":`+quote(arg)+`}}`)
	case "reason":
		check(t, v.id, resp, denied+`"reason":`+quote(arg)+`}}`)
	case "msg^":
		if !strings.HasPrefix(resp, denied+`"message":`+strings.TrimSuffix(quote(arg), `"`)) {
			t.Errorf("%s: response %s, want a denial whose message starts %q", v.id, resp, arg)
		}
	case "patch":
		checkPatch(t, v.id, resp, arg)
	default:
		t.Fatalf("bad expectation %q", v.want)
	}
}

func check(t *testing.T, id, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s: response\n got  %s\n want %s", id, got, want)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func checkPatch(t *testing.T, id, resp, want string) {
	t.Helper()
	var r struct {
		UID       string  `json:"uid"`
		Allowed   bool    `json:"allowed"`
		Patch     string  `json:"patch"`
		PatchType *string `json:"patchType"`
	}
	if err := json.Unmarshal([]byte(resp), &r); err != nil {
		t.Fatal(err)
	}
	patch, _ := base64.StdEncoding.DecodeString(r.Patch)
	var compact bytes.Buffer
	if err := json.Compact(&compact, patch); err != nil {
		t.Fatalf("%s: patch %q is not JSON: %v", id, patch, err)
	}
	if r.UID != "u-1" || !r.Allowed || r.PatchType == nil || *r.PatchType != "JSONPatch" || compact.String() != want {
		t.Errorf("%s: response %s (patch %s), want allowed with JSONPatch %s", id, resp, compact.String(), want)
	}
}

// TestAlwaysAllowDelay is A1: the answer comes after 5 seconds, not 10.
func TestAlwaysAllowDelay(t *testing.T) {
	t.Parallel()
	start := time.Now()
	got := call(context.Background(), NewHandler(Config{}), "POST", "/always-allow-delay-5s", "application/json", review("v1", vector{}.request()))
	took := time.Since(start)
	want := `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u-1","allowed":true,"status":{"metadata":{},"message":"this webhook allows all requests"}}}`
	if got.body != want || took < 5*time.Second || took > 6*time.Second {
		t.Errorf("A1: %s after %v, want %s after 5s", got.body, took, want)
	}
}
