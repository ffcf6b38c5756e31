package printercolumns

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	apitesting "k8s.io/kubernetes/pkg/api/testing"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"

	ourprinters "github.com/admitd/admitd/internal/printers"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/legacyinstall"
)

// objectsPerKind is how many filled objects each kind's rows compare on.
const objectsPerKind = 300

// TestPrinterRowsLikeUpstream: objects of every built-in kind with a
// printer, filled at random by upstream's own fuzzer (as its round-trip
// tests), print the same cells and row conditions as upstream's printers
// of the objects converted to the internal types. The creation time is an
// hour ago, so that ages do not straddle a boundary while both print.
func TestPrinterRowsLikeUpstream(t *testing.T) {
	cat := registry.NewCatalogue()
	generator := printers.NewTableGenerator().With(printersinternal.AddHandlers)
	filler := fuzzer.FuzzerFor(apitesting.FuzzerFuncs, rand.NewSource(41), legacyscheme.Codecs)
	created := metav1.NewTime(time.Now().Add(-time.Hour))
	compared := 0
	for _, res := range cat.Resources() {
		if res.Unstructured || !res.HasVerb("list") || slices.Contains(legacyinstall.OwnSchemes, res.Group) {
			continue
		}
		internal, err := legacyscheme.Scheme.New(schema.GroupVersionKind{Group: res.Group, Version: runtime.APIVersionInternal, Kind: res.Kind})
		if err != nil {
			t.Fatalf("%s: %v", res.GroupVersionResource, err)
		}
		if _, err := generator.GenerateTable(internal, printers.GenerateOptions{Wide: true}); err != nil {
			continue // no printer: the default columns, compared by TestPrinterColumnsLikeUpstream
		}
		differ := 0
		for i := 0; i < objectsPerKind && differ < 3; i++ {
			obj, err := legacyscheme.Scheme.New(res.GroupVersionKind())
			if err != nil {
				t.Fatalf("%s: %v", res.GroupVersionResource, err)
			}
			filler.Fill(obj)
			obj.GetObjectKind().SetGroupVersionKind(res.GroupVersionKind())
			m := obj.(metav1.Object)
			m.SetCreationTimestamp(created)
			m.SetDeletionTimestamp(nil)
			want, ok := upstreamRow(generator, obj)
			if !ok {
				continue
			}
			now := time.Now()
			got := ourprinters.Table(res, []runtime.Object{obj.DeepCopyObject()}, now, ourprinters.Options{IncludeObject: metav1.IncludeNone}).Rows[0]
			if !sameJSON(t, got.Cells, want.Cells) || !sameJSON(t, got.Conditions, want.Conditions) {
				differ++
				t.Errorf("%s object %d: cells\n ours     %v %v\n upstream %v %v", res.GroupVersionResource, i, cellsOf(got.Cells), got.Conditions, cellsOf(want.Cells), want.Conditions)
			}
			compared++
		}
	}
	t.Logf("%d rows compared", compared)
	if compared < 5000 {
		t.Errorf("only %d rows compared", compared)
	}
}

// upstreamRow is upstream's row of obj, converted to its internal type;
// false when upstream cannot print it (a conversion or printer error, or
// a panic on an object no validation would let through).
func upstreamRow(generator *printers.HumanReadableGenerator, obj runtime.Object) (row metav1.TableRow, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	gv := schema.GroupVersion{Group: obj.GetObjectKind().GroupVersionKind().Group, Version: runtime.APIVersionInternal}
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), gv)
	if err != nil {
		return row, false
	}
	table, err := generator.GenerateTable(internal, printers.GenerateOptions{Wide: true})
	if err != nil || len(table.Rows) != 1 {
		return row, false
	}
	return table.Rows[0], true
}

// sameJSON compares as clients see them: cells of int32 and int64 are the
// same number.
func sameJSON(t *testing.T, a, b any) bool {
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

func cellsOf(cells []any) string {
	out := ""
	for _, c := range cells {
		out += fmt.Sprintf("%#v ", c)
	}
	return out
}
