package cel

import (
	"testing"

	apiservercel "k8s.io/apiserver/pkg/cel"
)

// widgetType is an object with spec.items, a list of at most 1000 objects
// with a name, and spec.free, a list of unknown length.
func widgetType() *apiservercel.DeclType {
	field := func(name string, t *apiservercel.DeclType) *apiservercel.DeclField {
		return apiservercel.NewDeclField(name, t, true, nil, nil)
	}
	item := apiservercel.NewObjectType("item", map[string]*apiservercel.DeclField{"name": field("name", apiservercel.StringType)})
	spec := apiservercel.NewObjectType("spec", map[string]*apiservercel.DeclField{
		"items": field("items", apiservercel.NewListType(item, 1000)),
		"free":  field("free", apiservercel.NewListType(apiservercel.StringType, 200_000)),
	})
	return apiservercel.NewObjectType("widget", map[string]*apiservercel.DeclField{"spec": field("spec", spec)})
}

// TestTypedEstimator checks the typed estimate follows the declared sizes,
// through variables that select a typed field too, and falls back to the
// request size elsewhere.
func TestTypedEstimator(t *testing.T) {
	e, err := NewCompiler(Options{}).TypedEstimator(
		[]Variable{{Name: "items", Expression: "object.spec.items"}, {Name: "names", Expression: "object.spec.items.map(i, i.name)"}},
		CompileOptions{HasAuthorizer: true}, Types{Object: widgetType()})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		expr     string
		min, max uint64 // bounds of the estimate's Max
	}{
		{"object.spec.items.all(i, i.name.startsWith('a'))", 5000, 10_000},
		{"variables.items.all(i, i.name.startsWith('a'))", 5000, 10_000},
		{"object.spec.items.all(i, object.spec.items.exists(j, j.name == i.name))", 1_000_000, 10_000_000},
		{"object.spec.free.all(s, s != '')", 200_000, 2_000_000},
		// not a selection: sized by the 3 MiB request (1.5 million entries)
		{"variables.names.all(n, n != '')", 3_000_000, 30_000_000},
		{"request.userInfo.groups.all(g, g != 'x')", 3_000_000, 30_000_000},
	}
	for _, c := range cases {
		est, err := e.EstimateCost(c.expr)
		if err != nil {
			t.Errorf("EstimateCost(%s): %v", c.expr, err)
			continue
		}
		if est.Max < c.min || est.Max > c.max || !est.Loops {
			t.Errorf("EstimateCost(%s) = %+v, want Max in [%d, %d] and Loops", c.expr, est, c.min, c.max)
		}
	}
	if _, err := e.EstimateCost("object.spec.missing.size() > 0"); err == nil {
		t.Error("EstimateCost of a field the type does not declare: no error")
	}
}
