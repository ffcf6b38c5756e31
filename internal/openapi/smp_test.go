package openapi

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/internal/registry"
)

// TestStrategicMergeFromDocument computes a client-side apply patch as
// kubectl does (patch metadata from the v3 document) and applies it: a
// changed image in a two-container template must keep both containers.
func TestStrategicMergeFromDocument(t *testing.T) {
	s := New(registry.NewCatalogue(), Options{})
	var doc spec3.OpenAPI
	if err := json.Unmarshal(get(s, index(t, s)["apis/apps/v1"], "application/json").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var deployment *spec.Schema
	for _, sch := range doc.Components.Schemas {
		if gvks, ok := sch.Extensions[gvkExtension].([]any); ok && len(gvks) == 1 {
			if gvk := gvks[0].(map[string]any); gvk["group"] == "apps" && gvk["kind"] == "Deployment" {
				deployment = sch
			}
		}
	}
	if deployment == nil {
		t.Fatal("no schema carries x-kubernetes-group-version-kind apps/v1 Deployment")
	}
	meta := strategicpatch.PatchMetaFromOpenAPIV3{SchemaList: doc.Components.Schemas, Schema: deployment}

	tmpl := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app"},"spec":{"template":{"spec":{"containers":[` +
		`{"name":"main","image":"busybox:%s","ports":[{"containerPort":80}]},{"name":"side","image":"busybox:1.36"}]}}}}`
	original := []byte(strings.Replace(tmpl, "%s", "1.36", 1))
	modified := []byte(strings.Replace(tmpl, "%s", "1.37", 1))
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, original, meta, true)
	if err != nil {
		t.Fatalf("CreateThreeWayMergePatch: %v", err)
	}
	if !strings.Contains(string(patch), `"$setElementOrder/containers":[{"name":"main"},{"name":"side"}]`) {
		t.Errorf("patch %s does not merge containers by name", patch)
	}
	merged, err := strategicpatch.StrategicMergePatchUsingLookupPatchMeta(original, patch, meta)
	if err != nil {
		t.Fatalf("applying %s: %v", patch, err)
	}
	var got struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct{ Name, Image string } `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(merged, &got); err != nil {
		t.Fatal(err)
	}
	c := got.Spec.Template.Spec.Containers
	if len(c) != 2 || c[0].Image != "busybox:1.37" || c[1].Image != "busybox:1.36" {
		t.Errorf("merged containers = %+v, want main busybox:1.37 and side busybox:1.36", c)
	}
}
