package registry

import (
	"testing"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const dns1035Msg = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`

func svm(name, group, resource string) *storagemigrationv1.StorageVersionMigration {
	return &storagemigrationv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}}}
}

func svmCondition(typ string, status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: "R", LastTransitionTime: metav1.Date(2026, 1, 2, 3, 4, 5, 0, metav1.Now().Location())}
}

func TestStorageVersionMigrationResource(t *testing.T) {
	r, ok := testCatalogue.Lookup(schema.GroupVersionResource{Group: "storagemigration.k8s.io", Version: "v1", Resource: "storageversionmigrations"})
	if !ok || r.Namespaced || !r.StatusSubresource || !r.ClearStatusOnCreate || r.ShortNames != nil || r.TracksGeneration {
		t.Fatalf("storageversionmigrations = %+v, want cluster-scoped, status emptied on create, no short names, no generation", r)
	}
}

// The create and update errors kube-apiserver 1.37.2 printed for the same
// objects (test/e2e's transcript has them through kubectl).
func TestValidateStorageVersionMigration(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  *storagemigrationv1.StorageVersionMigration
		want string
	}{
		{"core group", svm("migrate-secrets", "", "secrets"), ""},
		{"all bad", svm("Bad_Name", "Bad_Group", "Pods"), `[metadata.name: Invalid value: "Bad_Name": ` + dnsSubdomainMsg +
			`, spec.resource.resource: Invalid value: "Pods": ` + dns1035Msg + `, spec.resource.group: Invalid value: "Bad_Group": ` + dnsSubdomainMsg + `]`},
		{"no resource", svm("empty", "-", ""), `[spec.resource.resource: Required value: resource is required to be set, ` +
			`spec.resource.group: Invalid value: "-": ` + dnsSubdomainMsg + `]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	old := svm("migrate-secrets", "", "secrets")
	next := svm("migrate-secrets", "apps", "secrets")
	want := `spec: Invalid value: {"Resource":{"group":"apps","resource":"secrets"}}: field is immutable`
	if got := aggregate(updateErrors(t, next, old)); got != want {
		t.Errorf("spec change errors = %s, want %s", got, want)
	}
}

// TestStorageVersionMigrationStatusWrites: a create drops the status sent,
// a write of the main resource keeps the stored one, and a status write
// keeps the spec and labels and is checked as kube-apiserver 1.37.2 checked
// the same writes.
func TestStorageVersionMigrationStatusWrites(t *testing.T) {
	r := resourceFor(t, svm("x", "", "secrets"))
	created := svm("migrate-secrets", "", "secrets")
	created.Status.ResourceVersion = "9"
	if errs := PrepareCreate(r, created); len(errs) > 0 || created.Status.ResourceVersion != "" {
		t.Fatalf("create: %v, status %+v, want no errors and an empty status", errs, created.Status)
	}
	running := created.DeepCopy()
	running.Labels = map[string]string{"a": "b"}
	running.Spec.Resource.Group = "apps"
	running.Status = storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "280", Conditions: []metav1.Condition{svmCondition("Running", "True")}}
	stored := PrepareForUpdate(r, "status", running.DeepCopy(), created).(*storagemigrationv1.StorageVersionMigration)
	if errs := r.ValidateSubresourceChange("status", stored, created); len(errs) > 0 || stored.Labels != nil || stored.Spec.Resource.Group != "" || stored.Status.ResourceVersion != "280" {
		t.Fatalf("status write: %v, %+v; want the new status only", errs, stored)
	}
	kept := PrepareForUpdate(r, "", created.DeepCopy(), stored).(*storagemigrationv1.StorageVersionMigration)
	if kept.Status.ResourceVersion != "280" {
		t.Errorf("update of the main resource: status %+v, want the stored one", kept.Status)
	}
	succeeded := stored.DeepCopy()
	succeeded.Status.Conditions = []metav1.Condition{svmCondition("Succeeded", "True")}
	for _, tc := range []struct {
		name   string
		status storagemigrationv1.StorageVersionMigrationStatus
		old    *storagemigrationv1.StorageVersionMigration
		want   string
	}{
		{"resourceVersion", storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "0281"}, stored,
			`[status.resourceVersion: Invalid value: "0281": resource version is not well formed: 0281, status.resourceVersion: Invalid value: "0281": field is immutable]`},
		{"succeeded and failed", storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "280",
			Conditions: []metav1.Condition{svmCondition("Succeeded", "True"), svmCondition("Failed", "True")}}, stored,
			`status.conditions: Invalid value: [{"type":"Succeeded","status":"True","lastTransitionTime":"2026-01-02T03:04:05Z","reason":"R","message":""},` +
				`{"type":"Failed","status":"True","lastTransitionTime":"2026-01-02T03:04:05Z","reason":"R","message":""}]: Both success and failed conditions cannot be true at the same time`},
		{"success undone", storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "280",
			Conditions: []metav1.Condition{svmCondition("Succeeded", "False")}}, succeeded,
			`status.conditions: Invalid value: [{"type":"Succeeded","status":"False","lastTransitionTime":"2026-01-02T03:04:05Z","reason":"R","message":""}]: Success condition cannot be set to false once it is true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.old.DeepCopy()
			obj.Status = tc.status
			next := PrepareForUpdate(r, "status", obj, tc.old)
			if got := aggregate(r.ValidateSubresourceChange("status", next, tc.old)); got != tc.want {
				t.Errorf("status write errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
