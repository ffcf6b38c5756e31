package registry

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ControllerRevision writes are checked as kube-apiserver 1.37.2 answers
// them (recorded from it).
func TestControllerRevisionValidation(t *testing.T) {
	revision := func(data string, n int64) *appsv1.ControllerRevision {
		cr := &appsv1.ControllerRevision{ObjectMeta: meta1("cr1"), Revision: n}
		if data != "" {
			cr.Data = runtime.RawExtension{Raw: []byte(data)}
		}
		return cr
	}
	for _, tc := range []struct {
		obj  *appsv1.ControllerRevision
		want string
	}{
		{revision(`"text"`, -2), "[revision: Invalid value: -2: must be greater than or equal to 0, data: Required value: data must be a valid JSON object]"},
		{revision("", 0), "data: Required value: data is mandatory"},
		{revision("null", 0), "data: Required value: data is mandatory"},
		{revision("{", 0), `data: Invalid value: "<value omitted>": error parsing data: unexpected end of JSON input`},
		{revision(`{"a":1}`, 1), ""},
	} {
		tc.obj.ResourceVersion = ""
		if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
			t.Errorf("data %s:\n got %s\nwant %s", tc.obj.Data.Raw, got, tc.want)
		}
	}
	want := `[revision: Invalid value: -1: must be greater than or equal to 0, data: Invalid value: {"a":2}: field is immutable]`
	if got := aggregate(updateErrors(t, revision(`{"a":2}`, -1), revision(`{"a":1}`, 1))); got != want {
		t.Errorf("update:\n got %s\nwant %s", got, want)
	}
}
