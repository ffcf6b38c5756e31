package kindwarnings

import (
	"context"
	"math/rand"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

// finalizers are finalizer names standard, qualified with and without a
// path, dotted, and not qualified names at all.
var finalizers = []string{"orphan", "foregroundDeletion", "kubernetes", "a.example.com/x", "example.com/", "a/b/c",
	"plain", "x.example.com", "Bad_Name", "-bad", "a/b"}

// TestCustomResourceWarningsLikeUpstream: custom resources created and
// updated with generated finalizers warn as apiextensions-apiserver's
// custom resource strategy.
func TestCustomResourceWarningsLikeUpstream(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
		Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}}}}
	res := registry.NewCatalogue().CustomResourcesOf(crd)[0]
	kind := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	upstream := customresource.NewStrategy(runtime.NewScheme(), true, kind, nil, nil,
		&structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}}, nil, nil, nil)
	r := rand.New(rand.NewSource(7))
	widget := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(kind)
		u.SetName("w")
		var fs []string
		for i := r.Intn(4); i > 0; i-- {
			fs = append(fs, pick(r, finalizers))
		}
		u.SetFinalizers(fs)
		return u
	}
	ctx := context.Background()
	warned := 0
	const n = 3000
	for i := 0; i < n; i++ {
		old, obj := widget(), widget()
		for _, w := range []struct {
			label     string
			want, got []string
		}{
			{"create", upstream.WarningsOnCreate(ctx, obj.DeepCopy()), res.Warnings(obj.DeepCopy(), nil)},
			{"update", upstream.WarningsOnUpdate(ctx, obj.DeepCopy(), old.DeepCopy()), res.UpdateWarnings("", obj.DeepCopy(), old.DeepCopy())},
		} {
			if len(w.want) > 0 {
				warned++
			}
			if !slices.Equal(w.got, w.want) {
				t.Fatalf("%s of finalizers %q over %q: warnings\n  %q\nupstream\n  %q", w.label, obj.GetFinalizers(), old.GetFinalizers(), w.got, w.want)
			}
		}
	}
	t.Logf("%d custom resource writes, %d warned", 2*n, warned)
	if warned < n/2 {
		t.Errorf("only %d of %d writes warned: the generator no longer reaches the warnings", warned, 2*n)
	}
}
