package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// TestDRARecordedCreates creates the objects of testdata/dra/<case>.yaml
// and compares the errors with the Status kube-apiserver 1.37.2 answered
// the same object with (<case>.status.json): every cause in order, but for
// those under a map (attributes, capacity, counters), which both sides
// report in map order, compared as a set.
func TestDRARecordedCreates(t *testing.T) {
	files, _ := filepath.Glob("testdata/dra/*.yaml")
	if len(files) == 0 {
		t.Fatal("no cases")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			obj := decodeCase(t, f)
			got := describeCauses(createErrors(t, obj))
			want := recordedCauses(t, strings.TrimSuffix(f, ".yaml")+".status.json")
			if !slices.Equal(got, want) {
				t.Errorf("create errors:\n%s\nwant (kube-apiserver 1.37.2):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func decodeCase(t *testing.T, file string) runtime.Object {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := Codecs().UniversalDeserializer().Decode(js, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// describeCauses are errors as a Status lists its causes (field: message),
// those under a map sorted at the end.
func describeCauses(errs field.ErrorList) []string {
	var ordered, unordered []string
	for _, e := range errs {
		line := e.Field + ": " + e.ErrorBody()
		if underMap(e.Field) {
			unordered = append(unordered, line)
		} else {
			ordered = append(ordered, line)
		}
	}
	slices.Sort(unordered)
	return append(ordered, unordered...)
}

func underMap(f string) bool {
	for _, m := range []string{".attributes[", ".capacity[", ".counters[", ".attributes:", ".capacity:", ".counters:"} {
		if strings.Contains(f+":", m) {
			return true
		}
	}
	return false
}

func recordedCauses(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var st metav1.Status
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	var ordered, unordered []string
	for _, c := range st.Details.Causes {
		line := c.Field + ": " + c.Message
		if underMap(c.Field) {
			unordered = append(unordered, line)
		} else {
			ordered = append(ordered, line)
		}
	}
	slices.Sort(unordered)
	return append(ordered, unordered...)
}

// TestDRARecordedUpdates: refusals of updates as kube-apiserver 1.37.2
// printed them.
func TestDRARecordedUpdates(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		change     func(runtime.Object)
		want       string
	}{
		{"claim spec", "claim.yaml", func(o runtime.Object) {
			o.(*resourcev1.ResourceClaim).Spec.Devices.Requests[0].Exactly.DeviceClassName = "other"
		}, "spec: Invalid value: null: field is immutable"},
		{"template spec", "template.yaml", func(o runtime.Object) {
			o.(*resourcev1.ResourceClaimTemplate).Spec.Spec.Devices.Requests[0].Exactly.DeviceClassName = "other"
		}, `spec: Invalid value: {"labels":{"a":"b"},"Spec":{"Devices":{"Requests":[{"Name":"gpu","Exactly":` +
			`{"DeviceClassName":"other","Selectors":null,"AllocationMode":"All","Count":0,"AdminAccess":null,"Tolerations":null,` +
			`"Capacity":null,"DerivedAttributes":null},"FirstAvailable":null}],"Constraints":null,"Config":null}}}: field is immutable`},
		{"slice driver, pool and node", "slice.yaml", func(o runtime.Object) {
			s := &o.(*resourcev1.ResourceSlice).Spec
			s.Driver, s.Pool.Name, s.NodeName = "other.example.com", "p2", ptr.To("node-2")
		}, `[spec.pool.name: Invalid value: "p2": field is immutable, ` +
			`spec.driver: Invalid value: "other.example.com": field is immutable, spec.nodeName: Invalid value: "node-2": field is immutable]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := decodeCase(t, "testdata/dra/updates/"+tc.file)
			objectMeta(old).SetResourceVersion("1")
			if errs := createErrors(t, old); len(errs) > 0 {
				t.Fatalf("create: %v", errs)
			}
			obj := old.DeepCopyObject()
			tc.change(obj)
			r := resourceFor(t, obj)
			r.Default(obj)
			if got := aggregate(PrepareUpdate(r, obj, old)); got != tc.want {
				t.Errorf("update errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
