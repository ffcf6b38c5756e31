package backgroundaudit

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestReportsOf: a PolicyReport per namespace with findings, the
// cluster-scoped objects' in the ClusterPolicyReport, summaries that
// count the results, one result per failed validation.
func TestReportsOf(t *testing.T) {
	r := &Results{Finished: time.Unix(1700000000, 0), Bindings: []*BindingResult{
		{Policy: "p", Binding: "b", Violations: []Finding{
			{Object: ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}, Messages: []string{"m1", "m2"}},
			{Object: ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: "a"}, Messages: []string{"m3"}},
		}, Errors: []Finding{
			{Object: ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "b", Name: "y"}, Messages: []string{"e"}},
		}},
	}}
	reports := reportsOf(r)
	if got, want := sortedKeys(reports), []string{"", "a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("report namespaces = %q, want %q", got, want)
	}
	for ns, want := range map[string]struct {
		kind    string
		results []string
		fail    int64
		errors  int64
	}{
		"":  {"ClusterPolicyReport", []string{"fail p/b Namespace a: m3"}, 1, 0},
		"a": {"PolicyReport", []string{"fail p/b ConfigMap x: m1", "fail p/b ConfigMap x: m2"}, 2, 0},
		"b": {"PolicyReport", []string{"error p/b ConfigMap y: e"}, 0, 1},
	} {
		rep := reports[ns]
		if rep.GetKind() != want.kind || rep.GetName() != ReportName || rep.GetNamespace() != ns || rep.GetLabels()[managedByLabel] != managedBy {
			t.Errorf("report %q: %s %s/%s labels %v", ns, rep.GetKind(), rep.GetNamespace(), rep.GetName(), rep.GetLabels())
		}
		if got := resultLines(rep); !slices.Equal(got, want.results) {
			t.Errorf("report %q results = %q, want %q", ns, got, want.results)
		}
		fail, _, _ := unstructured.NestedInt64(rep.Object, "summary", "fail")
		errs, _, _ := unstructured.NestedInt64(rep.Object, "summary", "error")
		if fail != want.fail || errs != want.errors {
			t.Errorf("report %q summary fail=%d error=%d, want %d and %d", ns, fail, errs, want.fail, want.errors)
		}
	}
}

func resultLines(rep *unstructured.Unstructured) []string {
	results, _, _ := unstructured.NestedSlice(rep.Object, "results")
	var out []string
	for _, r := range results {
		m := r.(map[string]any)
		res := m["resources"].([]any)[0].(map[string]any)
		out = append(out, fmt.Sprintf("%s %s/%s %s %s: %s", m["result"], m["policy"], m["rule"], res["kind"], res["name"], m["message"]))
	}
	return out
}
