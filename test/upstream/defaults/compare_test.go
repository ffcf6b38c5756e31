// Package defaults compares the defaults admitd fills in an object it
// decodes (internal/registry: each served kind's Resource.Default, the
// entry point its create and update handlers call) with kube-apiserver
// 1.37.2's decoding defaults: the scheme's generated defaulters of the
// served version (legacyscheme; apiextensions-apiserver's and
// kube-aggregator's own schemes for their groups), every feature gate at
// its default. Every version admitd can serve is compared (api/all=true),
// on objects filled by upstream's own fuzzer and on a hand-written table
// of nearly empty objects, where defaults show most.
//
// It compares decoding defaults only: what strategies set when they
// prepare a write is for the strategy and validation differential tests.
package defaults

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/apiserver/scheme"

	"github.com/admitd/admitd/internal/registry"
	_ "github.com/admitd/admitd/test/upstream/internal/legacyinstall"
)

// upstreamScheme is the scheme whose defaulters kube-apiserver runs when
// it decodes an object of group.
func upstreamScheme(group string) *runtime.Scheme {
	switch group {
	case "apiextensions.k8s.io":
		return apiextensionsapiserver.Scheme
	case "apiregistration.k8s.io":
		return aggregatorscheme.Scheme
	}
	return legacyscheme.Scheme
}

// allVersionsCatalogue serves every version admitd knows, beta and alpha
// included, as --runtime-config=api/all=true.
func allVersionsCatalogue(t *testing.T) *registry.Catalogue {
	t.Helper()
	e, err := registry.NewAPIEnablement(map[string]string{"api/all": "true"}, registry.RuntimeConfigOptions{PriorityAndFairness: true})
	if err != nil {
		t.Fatal(err)
	}
	return registry.NewCatalogueOf(e)
}

// servedKinds are the built-in kinds of the catalogue, each once, with the
// resource that serves it.
func servedKinds(cat *registry.Catalogue) ([]schema.GroupVersionKind, map[schema.GroupVersionKind]*registry.Resource) {
	var kinds []schema.GroupVersionKind
	byKind := map[schema.GroupVersionKind]*registry.Resource{}
	for _, res := range cat.Resources() {
		gvk := res.GroupVersionKind()
		if res.Unstructured || byKind[gvk] != nil {
			continue
		}
		byKind[gvk] = res
		kinds = append(kinds, gvk)
	}
	return kinds, byKind
}

// outcome is what one side's defaulting made of an object, or the panic
// it raised.
type outcome struct {
	obj   runtime.Object
	panic string
}

func defaulted(obj runtime.Object, apply func(runtime.Object)) (out outcome) {
	obj = obj.DeepCopyObject()
	defer func() {
		if r := recover(); r != nil {
			out = outcome{panic: fmt.Sprint(r)}
		}
	}()
	apply(obj)
	return outcome{obj: obj}
}

// roundTrip is obj as kube-apiserver keeps and serves it after decoding:
// converted to the internal version and back, which does what some
// versions' conversions do on decode (a Secret's stringData merged into
// its data), and admitd does in its defaulting. ok is false when upstream
// cannot convert obj (fuzzed values no decoder would make).
func roundTrip(scheme *runtime.Scheme, obj runtime.Object) (out runtime.Object, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	gvk := obj.GetObjectKind().GroupVersionKind()
	internal, err := scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return nil, false
	}
	out, err = scheme.ConvertToVersion(internal, gvk.GroupVersion())
	if err != nil {
		return nil, false
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, true
}

// difference is how admitd's defaults of obj differ from upstream's
// ("-upstream +admitd"), or "" when they agree. They agree when admitd's
// object encodes to the same JSON (nil and empty alike where the field is
// omitted when empty, as clients see it) as upstream's defaulted object,
// or as that object after its round trip through the internal version.
// A skipped field is set to upstream's value on admitd's side first.
func difference(res *registry.Resource, obj runtime.Object) string {
	gvk := res.GroupVersionKind()
	scheme := upstreamScheme(gvk.Group)
	up := defaulted(obj, scheme.Default)
	ours := defaulted(obj, res.Default)
	if up.panic != "" || ours.panic != "" {
		if up.panic != "" && ours.panic != "" {
			return ""
		}
		return fmt.Sprintf("panic: upstream %q, admitd %q", up.panic, ours.panic)
	}
	want := []runtime.Object{up.obj}
	if converted, ok := roundTrip(scheme, up.obj); ok {
		want = append(want, converted)
	}
	for _, o := range append(want, ours.obj) {
		// The server sets the kind it serves; some of admitd's defaulters
		// set it on their way through another version.
		o.GetObjectKind().SetGroupVersionKind(gvk)
	}
	for _, w := range want {
		got := ours.obj.DeepCopyObject()
		for _, s := range skipped {
			if s.kind == gvk.GroupKind() {
				s.align(w, got)
			}
		}
		if sameAsClientsSeeThem(w, got) {
			return ""
		}
	}
	w := want[len(want)-1]
	if d := cmp.Diff(w, ours.obj, cmpopts.EquateEmpty()); d != "" {
		return d
	}
	return "JSON:\n-" + jsonOf(w) + "\n+" + jsonOf(ours.obj)
}

// sameAsClientsSeeThem compares the JSON encodings; an object that does
// not encode (a fuzzed raw JSON field that is no JSON) is compared field
// by field, nil and empty alike.
func sameAsClientsSeeThem(a, b runtime.Object) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return cmp.Equal(a, b, cmpopts.EquateEmpty())
	}
	return string(ja) == string(jb)
}

func jsonOf(obj runtime.Object) string {
	b, err := json.Marshal(obj)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// firstLines keeps a long diff readable.
func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... (%d more lines)", len(lines)-n)
}
