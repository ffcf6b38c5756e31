package printers

import (
	"time"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The StorageVersionMigration table, as upstream's
// printStorageVersionMigration: the name (a column without the name
// format), the resource to migrate as resource.group, and the last of the
// Running, Succeeded and Failed conditions that is True (Unknown when
// none is). No Age column.
var storageVersionMigrationPrinter = kind([]metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Description: objectMetaDoc["name"]},
	str("Resource", "GroupResource to migrate"),
	str("Status", "Status of the migration"),
}, func(m *storagemigrationv1.StorageVersionMigration, _ time.Time) []any {
	return []any{m.Name, m.Spec.Resource.String(), migrationState(m.Status.Conditions)}
})

func migrationState(conditions []metav1.Condition) string {
	state := "Unknown"
	for _, c := range conditions {
		if c.Status != metav1.ConditionTrue {
			continue
		}
		switch storagemigrationv1.MigrationConditionType(c.Type) {
		case storagemigrationv1.MigrationRunning, storagemigrationv1.MigrationSucceeded, storagemigrationv1.MigrationFailed:
			state = c.Type
		}
	}
	return state
}
