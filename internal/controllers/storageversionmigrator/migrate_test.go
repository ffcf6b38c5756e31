package storageversionmigrator

import (
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The conditions kube-controller-manager 1.37.2 left on migrations of the
// same resources (recorded with the real one beside kube-apiserver).
var (
	succeeded = []string{"Running=False MigrationCompleted: Migration completed",
		"Succeeded=True StorageVersionMigrationSucceeded: Migration completed"}
	notMigratable = []string{"Running=False MigrationCompleted: Migration completed",
		`Failed=True StorageVersionMigrationFailed: resource "/v1, Resource=bindings" does not support discovery operations: [update patch list]`}
	notServed = []string{"Running=False MigrationCompleted: Migration completed",
		"Failed=True StorageVersionMigrationFailed: resource does not exist in discovery"}
)

// TestCustomResourcesMigrated: a custom resource stored in a version that
// is no longer the storage version is written again in the new one, one
// written since is left alone, and the definition's stored versions come
// down to the storage version, with its StorageMigrating condition ended.
func TestCustomResourcesMigrated(t *testing.T) {
	h := newHarness(t, nil)
	crds := h.admin.Resource(definitionsGVR)
	h.create(definitionsGVR, "", widgetsDefinition("v1beta1"))
	old := widgetsGVR.GroupVersion().WithResource("widgets")
	old.Version = "v1beta1"
	h.waitServed(old)
	h.create(old, "default", map[string]any{"apiVersion": "example.com/v1beta1", "kind": "Widget", "metadata": map[string]any{"name": "before"}})
	crd, err := crds.Get(t.Context(), "widgets.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.Object["spec"].(map[string]any)["versions"] = widgetsDefinition("v1")["spec"].(map[string]any)["versions"]
	if _, err := crds.Update(t.Context(), crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	after := h.create(widgetsGVR, "default", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "after"}})
	if got := h.storedAPIVersion("default", "before"); got != "example.com/v1beta1" {
		t.Fatalf("stored before the migration as %s, want example.com/v1beta1", got)
	}

	h.migrate("widgets", "example.com", "widgets")
	if got := conditions(h.waitEnded("widgets")); !slices.Equal(got, succeeded) {
		t.Errorf("conditions = %q, want %q", got, succeeded)
	}
	if got := h.storedAPIVersion("default", "before"); got != "example.com/v1" {
		t.Errorf("stored after the migration as %s, want example.com/v1", got)
	}
	now, err := h.admin.Resource(widgetsGVR).Namespace("default").Get(t.Context(), "after", metav1.GetOptions{})
	if err != nil || now.GetResourceVersion() != after.GetResourceVersion() {
		t.Errorf("object written since the checkpoint: %v, resourceVersion %s, want unchanged %s", err, now.GetResourceVersion(), after.GetResourceVersion())
	}
	crd, err = crds.Get(t.Context(), "widgets.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var def apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(crd.Object, &def); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(def.Status.StoredVersions, []string{"v1"}) {
		t.Errorf("stored versions = %q, want [v1]", def.Status.StoredVersions)
	}
	var migrating *apiextensionsv1.CustomResourceDefinitionCondition
	for i := range def.Status.Conditions {
		if def.Status.Conditions[i].Type == apiextensionsv1.StorageMigrating {
			migrating = &def.Status.Conditions[i]
		}
	}
	// As kube-controller-manager 1.37.2 left it on the same definition,
	// at its second generation (the storage version changed).
	if migrating == nil || migrating.Status != apiextensionsv1.ConditionFalse || migrating.Reason != "MigrationSucceeded" ||
		migrating.Message != "The migration has succeeded and the stored versions have been updated" || migrating.ObservedGeneration != 2 || def.Generation != 2 {
		t.Errorf("StorageMigrating condition = %+v at generation %d, want False MigrationSucceeded with the stored versions updated, observed at generation 2",
			migrating, def.Generation)
	}
}

// TestMigrationOutcomes: migrations of built-in resources succeed one
// after the other; a resource that cannot be patched fails at once, one
// the server does not serve after a minute.
func TestMigrationOutcomes(t *testing.T) {
	h := newHarness(t, func() time.Time { return time.Now().Add(2 * unknownResourceGrace) })
	for _, m := range [][3]string{{"cm-1", "", "configmaps"}, {"cm-2", "", "configmaps"}, {"deployments", "apps", "deployments"},
		{"bindings", "", "bindings"}, {"foos", "example.com", "foos"}} {
		h.migrate(m[0], m[1], m[2])
	}
	for name, want := range map[string][]string{"cm-1": succeeded, "cm-2": succeeded, "deployments": succeeded,
		"bindings": notMigratable, "foos": notServed} {
		if got := conditions(h.waitEnded(name)); !slices.Equal(got, want) {
			t.Errorf("%s conditions = %q, want %q", name, got, want)
		}
	}
}
