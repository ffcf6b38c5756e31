package policies

import (
	"context"
	"fmt"
	"sort"
	"strings"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/cel/mutation/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

// The result types of mutations.
var (
	applyConfigurationTypes = []*celgo.Type{types.NewObjectType("Object")}
	jsonPatchTypes          = []*celgo.Type{celgo.ListType(types.NewObjectType("JSONPatch"))}
)

// patchRequest is what one mutation needs: the CEL input (whose Object is
// the current object) and the versioned object it patches.
type patchRequest struct {
	in      admcel.Input
	current runtime.Object
	tc      managedfields.TypeConverter
}

// patcher applies one mutation and returns the patched copy; it never
// modifies the current object.
type patcher interface {
	patch(ctx context.Context, r patchRequest) (runtime.Object, error)
}

// evalMutation evaluates a mutation's expression with a fresh budget. A
// compile error is returned as is ("compilation failed: …"), unlike
// ValidatingAdmissionPolicy's "compilation error: " form.
func evalMutation(ctx context.Context, comp *admcel.Composition, p *admcel.Program, in admcel.Input) (ref.Val, error) {
	if err := p.Err(); err != nil {
		return nil, err
	}
	act, err := comp.NewActivation(ctx, in)
	if err != nil {
		return nil, err
	}
	res, _, err := p.Eval(ctx, act, admcel.RuntimeBudget)
	if err != nil {
		return nil, err
	}
	if res.Err != nil {
		return nil, res.Err
	}
	return res.Value, nil
}

// applyPatcher merges an Object{…} apply configuration into the object.
type applyPatcher struct {
	comp *admcel.Composition
	prog *admcel.Program
}

func (p *applyPatcher) patch(ctx context.Context, r patchRequest) (runtime.Object, error) {
	v, err := evalMutation(ctx, p.comp, p.prog, r.in)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(*dynamic.ObjectVal)
	if !ok {
		return nil, fmt.Errorf("unsupported return type from ApplyConfiguration expression: %v", v.Type())
	}
	if err := obj.CheckTypeNamesMatchFieldPathNames(); err != nil {
		return nil, fmt.Errorf("type mismatch: %w", err)
	}
	fields, ok := obj.Value().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("invalid return type: %T", v)
	}
	patch := &unstructured.Unstructured{Object: fields}
	patch.SetGroupVersionKind(r.current.GetObjectKind().GroupVersionKind())
	out, err := applyConfiguration(r.tc, r.current, patch)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: %w", err)
	}
	return out, nil
}

// applyConfiguration merges patch into a copy of live with the structured
// merge semantics of server-side apply, without recording field ownership.
// Patches that set atomic lists, maps or structs are refused, since they
// would silently drop the fields they do not name.
func applyConfiguration(tc managedfields.TypeConverter, live runtime.Object, patch *unstructured.Unstructured) (runtime.Object, error) {
	if gvk := live.GetObjectKind().GroupVersionKind(); patch.GroupVersionKind() != gvk {
		return nil, fmt.Errorf("patch (%v) and original object (%v) are not of the same gvk", patch.GroupVersionKind().String(), gvk.String())
	}
	if tc == nil {
		return nil, fmt.Errorf("type converter must not be nil")
	}
	patchTyped, err := tc.ObjectToTyped(patch)
	if err != nil {
		return nil, fmt.Errorf("failed to convert patch object to typed object: %w", err)
	}
	if atomics := atomicPaths(nil, patchTyped.Schema(), patchTyped.TypeRef(), patchTyped.AsValue()); len(atomics) > 0 {
		return nil, fmt.Errorf("invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: %v", strings.Join(atomics, ", "))
	}
	liveTyped, err := tc.ObjectToTyped(live, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("failed to convert original object to typed object: %w", err)
	}
	merged, err := liveTyped.Merge(patchTyped)
	if err != nil {
		return nil, fmt.Errorf("failed to merge patch: %w", err)
	}
	out, err := tc.TypedToObject(merged)
	if err != nil {
		return nil, fmt.Errorf("failed to convert typed object to object: %w", err)
	}
	return out, nil
}

// atomicPaths lists the paths, within v of type tr, of every map, struct or
// list whose schema makes it atomic.
func atomicPaths(path []fieldpath.PathElement, s *smdschema.Schema, tr smdschema.TypeRef, v value.Value) []string {
	atom, ok := s.Resolve(tr)
	if !ok {
		return nil
	}
	var out []string
	if v.IsMap() && atom.Map != nil {
		if atom.Map.ElementRelationship == smdschema.Atomic {
			out = append(out, renderPath(path))
		}
		m := v.AsMap()
		var keys []string
		m.Iterate(func(k string, _ value.Value) bool { keys = append(keys, k); return true })
		sort.Strings(keys)
		for _, k := range keys {
			if f, ok := atom.Map.FindField(k); ok {
				fv, _ := m.Get(k)
				out = append(out, atomicPaths(withElem(path, fieldpath.PathElement{FieldName: &k}), s, f.Type, fv)...)
			}
		}
	}
	if v.IsList() && atom.List != nil {
		if atom.List.ElementRelationship == smdschema.Atomic {
			out = append(out, renderPath(path))
		}
		l := v.AsList()
		for i := range l.Length() {
			out = append(out, atomicPaths(withElem(path, fieldpath.PathElement{Index: &i}), s, atom.List.ElementType, l.At(i))...)
		}
	}
	return out
}

func withElem(path []fieldpath.PathElement, e fieldpath.PathElement) []fieldpath.PathElement {
	return append(append(make([]fieldpath.PathElement, 0, len(path)+1), path...), e)
}

func renderPath(path []fieldpath.PathElement) string {
	var b strings.Builder
	for _, e := range path {
		b.WriteString(e.String())
	}
	return b.String()
}
