package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// StorageClass writes are checked as kube-apiserver 1.37.2 answers them
// (recorded from it): the declarative errors (a missing provisioner,
// immutable fields without their values) after the others.
func TestStorageClassValidation(t *testing.T) {
	sc := func(provisioner string) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "sc", ResourceVersion: "1"}, Provisioner: provisioner}
	}
	bad := sc("")
	bad.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRecycle)
	bad.VolumeBindingMode = ptr.To(storagev1.VolumeBindingMode("Later"))
	badName := sc("Bad Prov!")
	badName.Parameters = map[string]string{"": "x"}
	emptyTerm := sc("p.example.com")
	emptyTerm.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: "k"}}}, {}}
	repeated := sc("p.example.com")
	repeated.AllowedTopologies = []corev1.TopologySelectorTerm{
		{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: "k", Values: []string{"a", "a"}}, {Key: "k", Values: []string{"b"}}}}}
	for _, tc := range []struct {
		name string
		obj  *storagev1.StorageClass
		want string
	}{
		{"no provisioner", sc(""), "provisioner: Required value"},
		{"bad values, declarative last", bad, `[reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain", volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer", provisioner: Required value]`},
		{"provisioner and parameters", badName, `[provisioner: Invalid value: "bad prov!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), parameters: Invalid value: "": field can not be empty.]`},
		{"a term without expressions repeats", emptyTerm, `[allowedTopologies[0].matchLabelExpressions[0].values: Required value, allowedTopologies[1].matchLabelExpressions: Duplicate value: ""]`},
		{"repeated values and keys", repeated, `[allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: "a", allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "k"]`},
		{"valid", sc("p.example.com"), ""},
	} {
		if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	old := sc("p.example.com")
	old.Parameters = map[string]string{"a": "b"}
	old.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimDelete)
	old.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
	changed := old.DeepCopy()
	changed.Provisioner, changed.Parameters = "q.example.com", map[string]string{"a": "c"}
	changed.ReclaimPolicy, changed.VolumeBindingMode = ptr.To(corev1.PersistentVolumeReclaimRetain), ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
	changed.AllowVolumeExpansion, changed.MountOptions = ptr.To(true), []string{"ro"}
	want := "[provisioner: Invalid value: null: field is immutable, parameters: Invalid value: null: field is immutable, reclaimPolicy: Invalid value: null: field is immutable, volumeBindingMode: Invalid value: null: field is immutable]"
	if got := aggregate(resourceFor(t, changed).ValidateChange(changed, old)); got != want {
		t.Errorf("update:\n got %s\nwant %s", got, want)
	}
}
