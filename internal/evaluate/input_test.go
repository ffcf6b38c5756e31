package evaluate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadObjectsReadsDirectoriesDocumentsAndLists(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n")
	write(t, dir, "b/list.json", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}]}`)
	write(t, dir, "b/empty.json", `{"apiVersion":"v1","kind":"List","items":null}`)
	write(t, dir, "b/notes.txt", "not read")
	objs, err := LoadObjects(dir)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind()+"@"+filepath.Base(o.Source))
	}
	want := []string{"Namespace@ns.yaml#1", "ConfigMap@ns.yaml#2", "Secret@list.json#1.items[0]"}
	if len(kinds) != len(want) {
		t.Fatalf("LoadObjects = %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Errorf("object %d = %s, want %s", i, kinds[i], want[i])
		}
	}
}

func TestLoadObjectsErrorsAreConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.yaml", "metadata: {name: x}\n")
	_, err := LoadObjects(bad)
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("LoadObjects(no kind) = %v, want a *ConfigError", err)
	}
	if _, err := LoadObjects(filepath.Join(dir, "missing.yaml")); !errors.As(err, &ce) {
		t.Fatalf("LoadObjects(missing) = %v, want a *ConfigError", err)
	}
}

func TestLoadRequestOfAnAdmissionReview(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "review.yaml", `apiVersion: admission.k8s.io/v1
kind: AdmissionReview
request:
  uid: 1
  operation: UPDATE
  resource: {group: apps, version: v1, resource: deployments}
  subResource: scale
  namespace: team-a
  userInfo: {username: alice, uid: u1, groups: [dev], extra: {scopes: [a, b]}}
  object: {apiVersion: autoscaling/v1, kind: Scale, metadata: {name: web}}
  oldObject: {apiVersion: autoscaling/v1, kind: Scale, metadata: {name: web}}
  dryRun: true
  options: {apiVersion: meta.k8s.io/v1, kind: UpdateOptions, fieldManager: me}
`)
	q, err := LoadRequest(p)
	if err != nil {
		t.Fatal(err)
	}
	if q.Operation != Update || q.Namespace != "team-a" || q.Subresource != "scale" || !q.DryRun {
		t.Errorf("LoadRequest = %+v, want UPDATE of scale in team-a, dry run", q)
	}
	if q.Resource == nil || q.Resource.Resource != "deployments" || q.Resource.Group != "apps" {
		t.Errorf("Resource = %v, want apps/v1 deployments", q.Resource)
	}
	if q.User.Name != "alice" || q.User.UID != "u1" || len(q.User.Groups) != 1 || len(q.User.Extra["scopes"]) != 2 {
		t.Errorf("User = %+v, want alice (u1) in dev with 2 scopes", q.User)
	}
	if q.Options["fieldManager"] != "me" || q.Options["kind"] != nil {
		t.Errorf("Options = %v, want fieldManager only", q.Options)
	}
	if q.Object.GetKind() != "Scale" || q.OldObject == nil {
		t.Errorf("objects = %v, %v", q.Object, q.OldObject)
	}
}

func TestLoadRequestOfADeleteReviewWithoutObjects(t *testing.T) {
	q, err := FromReview(map[string]any{"request": map[string]any{
		"operation": "DELETE", "name": "cm", "namespace": "ns",
		"kind": map[string]any{"group": "", "version": "v1", "kind": "ConfigMap"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if q.Object.GetKind() != "ConfigMap" || q.Object.GetName() != "cm" || q.Object.GetNamespace() != "ns" {
		t.Errorf("the object of a DELETE review = %v, want ConfigMap ns/cm", q.Object.Object)
	}
	if _, err := FromReview(map[string]any{"request": map[string]any{"operation": "CREATE"}}); err == nil {
		t.Error("FromReview(CREATE without object) = nil error")
	}
}

func TestLoadAppliesOverrides(t *testing.T) {
	dir := t.TempDir()
	req := write(t, dir, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: x}\n")
	old := write(t, dir, "old.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: x}\n")
	in, err := Load(Options{Request: req, Old: old, Operation: "update", Namespace: "y", User: User{Name: "bob"}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	q := in.Request
	if q.Operation != Update || q.Namespace != "y" || q.User.Name != "bob" || !q.DryRun || q.OldObject == nil {
		t.Errorf("Load = %+v, want the flags' UPDATE in y by bob, dry run, with the old object", q)
	}
	if _, err := Load(Options{}); err == nil {
		t.Error("Load without a request = nil error")
	}
	two := write(t, dir, "two.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n")
	if _, err := Load(Options{Request: two}); err == nil {
		t.Error("Load of a request file with two objects = nil error")
	}
}
