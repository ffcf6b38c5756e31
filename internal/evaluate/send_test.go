package evaluate

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// TestUpdateRacingAWriterIsSentAgain: a writer changes the stored object
// between the UPDATE's read and its commit (here a webhook, on its first
// call, as the TTL controller annotates a new node); the UPDATE is sent
// again and its answer is that of the second request.
func TestUpdateRacingAWriterIsSentAgain(t *testing.T) {
	ctx := context.Background()
	var admin atomic.Pointer[dynamic.DynamicClient]
	var calls atomic.Int32
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	hook := webhooktest.Start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review map[string]any
		_ = json.NewDecoder(r.Body).Decode(&review)
		req := review["request"].(map[string]any)
		if req["name"] == "raced" && calls.Add(1) == 1 {
			cur, err := admin.Load().Resource(cms).Namespace("default").Get(r.Context(), "raced", metav1.GetOptions{})
			if err == nil {
				cur.SetLabels(map[string]string{"writer": "controller"})
				_, err = admin.Load().Resource(cms).Namespace("default").Update(r.Context(), cur, metav1.UpdateOptions{})
			}
			if err != nil {
				t.Errorf("the racing write: %v", err)
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"response": map[string]any{"uid": req["uid"], "allowed": true}})
	}))
	cfg := hook.ClientConfig("/race")
	config := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: race}
webhooks:
- name: race.example.com
  clientConfig: {url: "` + *cfg.URL + `", caBundle: "` + b64(cfg.CABundle) + `"}
  rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  sideEffects: None
  admissionReviewVersions: [v1]`
	inst, err := startServer(ctx, ServerConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close()
	dyn, err := dynamic.NewForConfig(inst.admin)
	if err != nil {
		t.Fatal(err)
	}
	admin.Store(dyn)
	objs := append(objects(t, config), Object{Unstructured: configMap("raced"), Source: "stored"})
	update := configMap("raced")
	update.Object["data"] = map[string]any{"k": "new"}
	r, err := evaluateOn(ctx, inst, objs, Request{Operation: Update, Object: update})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Allowed || r.Object["data"].(map[string]any)["k"] != "new" {
		t.Fatalf("UPDATE raced by a writer = %s %+v, want it stored on the second try", r.Decision, r.Status)
	}
	if n := calls.Load(); n < 3 {
		t.Errorf("webhook calls on raced = %d, want at least 3 (the raced try, the writer's, the second try)", n)
	}
}
