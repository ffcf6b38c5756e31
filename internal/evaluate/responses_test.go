package evaluate

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestParseResponses(t *testing.T) {
	r, err := ParseResponses([]byte(`apiVersion: eval.admitd.io/v1alpha1
kind: WebhookResponses
webhooks:
  every.example.com:
    allowed: true
    patch: [{op: add, path: /metadata/labels/x, value: "1"}]
  cfg/calls.example.com:
  - {allowed: true, warnings: [first]}
  - allowed: false
    status: {code: 403, reason: Forbidden, message: nope}
  base64.example.com:
    allowed: true
    patch: ` + base64.StdEncoding.EncodeToString([]byte(`[{"op":"remove","path":"/data"}]`)) + `
    patchType: JSONPatch
`))
	if err != nil {
		t.Fatal(err)
	}
	every := r["every.example.com"]
	if !every.Every || every.Calls[0].PatchType != "JSONPatch" || !strings.Contains(string(every.Calls[0].Patch), `"path":"/metadata/labels/x"`) {
		t.Errorf("every.example.com = %+v, want one response for every call, a JSONPatch", every)
	}
	for n := 0; n < 3; n++ {
		if _, ok := every.response(n); !ok {
			t.Errorf("every.response(%d) missing", n)
		}
	}
	calls := r["cfg/calls.example.com"]
	if calls.Every || len(calls.Calls) != 2 {
		t.Fatalf("cfg/calls.example.com = %+v, want two responses in order", calls)
	}
	if got, _ := calls.response(1); got.Allowed || got.Status.Code != 403 {
		t.Errorf("second call = %+v, want the denial", got)
	}
	if _, ok := calls.response(2); ok {
		t.Error("a third call has a response; want none")
	}
	if got := string(r["base64.example.com"].Calls[0].Patch); got != `[{"op":"remove","path":"/data"}]` {
		t.Errorf("a base64 patch = %s, want it decoded", got)
	}
}

func TestParseResponsesRefusesMistakes(t *testing.T) {
	head := "apiVersion: eval.admitd.io/v1alpha1\nkind: WebhookResponses\nwebhooks:\n"
	for name, doc := range map[string]string{
		"wrong kind":        "apiVersion: eval.admitd.io/v1alpha1\nkind: Responses\nwebhooks: {}\n",
		"unknown field":     head + "  a: {allowed: true, alowed: false}\n",
		"empty list":        head + "  a: []\n",
		"patch not a patch": head + "  a: {allowed: true, patch: {op: add}}\n",
		"patch not base64":  head + "  a: {allowed: true, patch: \"%%%\"}\n",
	} {
		if _, err := ParseResponses([]byte(doc)); err == nil {
			t.Errorf("ParseResponses(%s) = nil error", name)
		}
	}
}
