package printers

import (
	"testing"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStorageVersionMigrationTable mirrors upstream's
// TestPrintStorageVersionMigration(List): the resource as resource.group
// (the resource alone in the core group), the last True state condition,
// Unknown without one, and no Age column.
func TestStorageVersionMigrationTable(t *testing.T) {
	migration := func(name, group, resource string, conds ...metav1.Condition) *storagemigrationv1.StorageVersionMigration {
		return &storagemigrationv1.StorageVersionMigration{ObjectMeta: clusterMeta(name),
			Spec:   storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}},
			Status: storagemigrationv1.StorageVersionMigrationStatus{Conditions: conds}}
	}
	cond := func(t string, s metav1.ConditionStatus) metav1.Condition { return metav1.Condition{Type: t, Status: s} }
	res := lookup(t, "storagemigration.k8s.io", "v1", "storageversionmigrations")
	checkKind(t, res, []string{"Name", "Resource", "Status"}, []cellCase{
		{name: "succeeded", obj: migration("print-test", "test-group", "test-resource", cond("Running", "False"), cond("Succeeded", "True")),
			cells: []any{"print-test", "test-resource.test-group", "Succeeded"}},
		{name: "core group", obj: migration("print-test", "", "test-resource", cond("Running", "False"), cond("Succeeded", "True")),
			cells: []any{"print-test", "test-resource", "Succeeded"}},
		{name: "running", obj: migration("print-test2", "test-group2", "test-resource2", cond("Running", "True")),
			cells: []any{"print-test2", "test-resource2.test-group2", "Running"}},
		{name: "no condition", obj: migration("new", "apps", "deployments"), cells: []any{"new", "deployments.apps", "Unknown"}},
		{name: "other types", obj: migration("other", "apps", "deployments", cond("Ready", "True"), cond("Failed", "False")),
			cells: []any{"other", "deployments.apps", "Unknown"}},
		{name: "last true wins", obj: migration("both", "", "secrets", cond("Failed", "True"), cond("Running", "True")),
			cells: []any{"both", "secrets", "Running"}},
	})
}
