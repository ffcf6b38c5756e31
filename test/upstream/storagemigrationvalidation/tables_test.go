package storagemigrationvalidation

import (
	"fmt"
	"testing"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/registry"
)

// The inputs of upstream's own validation tests
// (pkg/apis/storagemigration/validation/validation_test.go:
// TestValidateStorageVersionMigration, TestValidateStorageVersionMigrationUpdate,
// TestValidateStorageVersionMigrationStatusUpdate) as v1 objects, and the
// cases recorded from kube-apiserver 1.37.2 for test/e2e.

var transitioned = metav1.Date(2026, 1, 2, 3, 4, 5, 0, metav1.Now().Location())

func migration(name, group, resource string) *storagemigrationv1.StorageVersionMigration {
	return &storagemigrationv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}}}
}

func withStatus(rv string, conds ...metav1.Condition) *storagemigrationv1.StorageVersionMigration {
	m := migration("test-svm", "example.com", "myresources")
	m.Status = storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: rv, Conditions: conds}
	return m
}

func cond(t storagemigrationv1.MigrationConditionType, s metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: s, Reason: reason, LastTransitionTime: transitioned}
}

var (
	running        = cond(storagemigrationv1.MigrationRunning, metav1.ConditionTrue, "Running")
	succeeded      = cond(storagemigrationv1.MigrationSucceeded, metav1.ConditionTrue, "Succeeded")
	failed         = cond(storagemigrationv1.MigrationFailed, metav1.ConditionTrue, "Failed")
	notRunning     = cond(storagemigrationv1.MigrationRunning, metav1.ConditionFalse, "NotRunning")
	notSucceeded   = cond(storagemigrationv1.MigrationSucceeded, metav1.ConditionFalse, "NotSucceeded")
	notFailed      = cond(storagemigrationv1.MigrationFailed, metav1.ConditionFalse, "NotFailed")
	badCondition   = metav1.Condition{Type: "bad type!", Status: "maybe", Reason: "bad reason!"}
	emptyCondition = metav1.Condition{}
)

func upstreamCreates() map[string]*storagemigrationv1.StorageVersionMigration {
	return map[string]*storagemigrationv1.StorageVersionMigration{
		"all fields set":      migration("test-svm", "non-empty", "non-empty"),
		"all fields empty":    migration("test-svm", "", ""),
		"resource empty":      migration("test-svm", "non-empty", ""),
		"resource invalid":    migration("test-svm", "non-empty", "."),
		"group invalid":       migration("test-svm", "-", "non-empty"),
		"core group":          migration("secrets", "", "secrets"),
		"both invalid":        migration("x", "Bad_Group", "Pods"),
		"bad name":            migration("Bad_Name", "apps", "deployments"),
		"status on create":    withStatus("abc", succeeded, failed),
		"namespace":           {ObjectMeta: metav1.ObjectMeta{Name: "ns", Namespace: "default"}, Spec: migration("", "", "pods").Spec},
		"bad finalizer":       {ObjectMeta: metav1.ObjectMeta{Name: "fin", Finalizers: []string{"cleanup"}}, Spec: migration("", "", "pods").Spec},
		"generate name":       {ObjectMeta: metav1.ObjectMeta{GenerateName: "svm-"}, Spec: migration("", "apps", "deployments").Spec},
		"resource too long":   migration("long", "apps", "a123456789012345678901234567890123456789012345678901234567890123"),
		"group with resource": migration("dots", "apps.", "deployments.apps"),
	}
}

func upstreamUpdates() map[string][2]*storagemigrationv1.StorageVersionMigration {
	valid := migration("test-svm", "example.com", "myresources")
	labelled := valid.DeepCopy()
	labelled.Labels = map[string]string{"a": "b"}
	badLabels := valid.DeepCopy()
	badLabels.Labels = map[string]string{"bad key!": "v"}
	newGroup := valid.DeepCopy()
	newGroup.Spec.Resource.Group = "new.example.com"
	emptied := valid.DeepCopy()
	emptied.Spec.Resource.Resource = ""
	withNewStatus := valid.DeepCopy()
	withNewStatus.Status.Conditions = []metav1.Condition{running}
	return map[string][2]*storagemigrationv1.StorageVersionMigration{
		"no change":        {valid, valid},
		"labels":           {labelled, valid},
		"bad labels":       {badLabels, valid},
		"spec changed":     {newGroup, valid},
		"resource emptied": {emptied, valid},
		"status ignored":   {withNewStatus, valid},
		"status kept":      {valid, withStatus("5", running)},
		"spec changed, bad labels": {func() *storagemigrationv1.StorageVersionMigration {
			m := newGroup.DeepCopy()
			m.Labels = badLabels.Labels
			return m
		}(), valid},
		"resource emptied and kept": {emptied, emptied},
	}
}

func upstreamStatusWrites() map[string][2]*storagemigrationv1.StorageVersionMigration {
	return map[string][2]*storagemigrationv1.StorageVersionMigration{
		"initial status with RV":   {withStatus("123", running), withStatus("")},
		"running to succeeded":     {withStatus("123", notRunning, succeeded), withStatus("123", running)},
		"running to failed":        {withStatus("123", notRunning, failed), withStatus("123", running)},
		"succeeded stays":          {withStatus("123", succeeded), withStatus("123", succeeded)},
		"failed stays":             {withStatus("123", failed), withStatus("123", failed)},
		"resource version change":  {withStatus("456", running), withStatus("123", running)},
		"bad resource version":     {withStatus("abc", running), withStatus("")},
		"leading zero":             {withStatus("0123"), withStatus("")},
		"zero":                     {withStatus("0"), withStatus("")},
		"resource version removed": {withStatus("", running), withStatus("123", running)},
		"succeeded and failed":     {withStatus("123", succeeded, failed), withStatus("123", running)},
		"succeeded back to false":  {withStatus("123", notSucceeded), withStatus("123", succeeded)},
		"failed back to false":     {withStatus("123", notFailed), withStatus("123", failed)},
		"succeeded removed":        {withStatus("123"), withStatus("123", succeeded)},
		"bad condition":            {withStatus("1", badCondition), withStatus("")},
		"empty condition":          {withStatus("1", emptyCondition), withStatus("")},
		"repeated condition":       {withStatus("1", running, running), withStatus("")},
		"all wrong":                {withStatus("x", badCondition, succeeded, failed), withStatus("9", failed, succeeded)},
		"spec and labels in a status": {func() *storagemigrationv1.StorageVersionMigration {
			m := withStatus("1", running)
			m.Spec.Resource.Group = "other"
			m.Labels = map[string]string{"a": "b"}
			return m
		}(), withStatus("")},
	}
}

func TestUpstreamTables(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for name, m := range upstreamCreates() {
		for _, defaulted := range []bool{false, true} {
			compare(t, cat, write{Name: fmt.Sprintf("create %s (defaulted %v)", name, defaulted), Obj: m, Defaulted: defaulted}, &c)
		}
	}
	for name, u := range upstreamUpdates() {
		compare(t, cat, write{Name: "update " + name, Obj: u[0], Old: u[1], Defaulted: true}, &c)
	}
	for name, u := range upstreamStatusWrites() {
		compare(t, cat, write{Name: "status write " + name, Obj: u[0], Old: u[1], Status: true, Defaulted: true}, &c)
		compare(t, cat, write{Name: "update with status " + name, Obj: u[0], Old: u[1], Defaulted: true}, &c)
	}
	t.Log(c.String())
	if c.Mismatches == 0 && (c.Refused < 20 || c.Accepted < 15) {
		t.Errorf("upstream's tables are too one-sided: %s", c.String())
	}
}
