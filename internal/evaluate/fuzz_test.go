package evaluate

import (
	"encoding/json"
	"testing"
)

func FuzzParseResponses(f *testing.F) {
	f.Add([]byte("apiVersion: eval.admitd.io/v1alpha1\nkind: WebhookResponses\nwebhooks:\n  a: {allowed: true, patch: [{op: add, path: /x, value: 1}]}\n"))
	f.Add([]byte(`{"apiVersion":"eval.admitd.io/v1alpha1","kind":"WebhookResponses","webhooks":{"c/a":[{"allowed":false,"status":{"code":403}}]}}`))
	f.Add([]byte("apiVersion: eval.admitd.io/v1alpha1\nkind: WebhookResponses\nwebhooks: {a: {allowed: true, patch: \"W10=\"}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseResponses(data)
		if err != nil {
			return
		}
		for name, rec := range r {
			if len(rec.Calls) == 0 {
				t.Fatalf("%s: parsed with no response", name)
			}
			for _, c := range rec.Calls {
				if len(c.Patch) > 0 && (c.PatchType == "" || !json.Valid(c.Patch)) {
					t.Fatalf("%s: patch %q of type %q", name, c.Patch, c.PatchType)
				}
			}
		}
	})
}

func FuzzFromReview(f *testing.F) {
	f.Add([]byte(`{"request":{"operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}},"userInfo":{"username":"a","groups":["g"],"extra":{"k":["v"]}}}}`))
	f.Add([]byte(`{"request":{"operation":"DELETE","name":"c","namespace":"n","kind":{"version":"v1","kind":"ConfigMap"}}}`))
	f.Add([]byte(`{"request":{"operation":"UPDATE","resource":{"group":"apps","version":"v1","resource":"deployments"},"object":{},"oldObject":{"a":1}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var review map[string]any
		if json.Unmarshal(data, &review) != nil {
			return
		}
		q, err := FromReview(review)
		if err == nil && q.Object == nil {
			t.Fatal("FromReview returned a request without an object")
		}
	})
}
