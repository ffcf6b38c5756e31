package backgroundaudit

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission/policies"
)

// fingerprint is what a scan's results depend on beyond the objects: the
// narrowed snapshot (a new one for every change of a policy or binding),
// the resourceVersions of the params the Audit bindings select, and
// whether the PolicyReport CRD is installed (the reports are written as
// soon as it is).
type fingerprint struct {
	snap    *policies.Snapshot
	params  []string
	reports bool
}

func (f fingerprint) equal(g fingerprint) bool {
	return f.snap == g.snap && slices.Equal(f.params, g.params) && f.reports == g.reports
}

// fingerprint reads the current one; the params come from the server's
// watch-fed caches.
func (s *Scanner) fingerprint(ctx context.Context) fingerprint {
	snap := s.src.Current()
	_, reports := s.o.Catalogue.Lookup(policyReports)
	fp := fingerprint{snap: snap, reports: reports}
	if s.o.Params == nil {
		return fp
	}
	for _, b := range bindings(snap) {
		for _, p := range s.params(ctx, b) {
			if m, err := meta.Accessor(p); err == nil {
				fp.params = append(fp.params, b.binding.Name+" "+m.GetNamespace()+"/"+m.GetName()+"@"+m.GetResourceVersion())
			}
		}
	}
	slices.Sort(fp.params)
	return fp
}

// params are the params b's paramRef may select: the one it names in its
// namespace, or those its selector selects there; in every namespace when
// the namespace is the request's. Errors read as no params (the scan
// reports them per object).
func (s *Scanner) params(ctx context.Context, b auditBinding) []runtime.Object {
	pk, ref := b.policy.Spec.ParamKind, b.binding.Spec.ParamRef
	if pk == nil || ref == nil {
		return nil
	}
	gvr, namespaced, ok := s.o.Params.ResolveParamKind(schema.FromAPIVersionAndKind(pk.APIVersion, pk.Kind))
	if !ok {
		return nil
	}
	ns := ""
	if namespaced {
		ns = ref.Namespace
	}
	if ref.Name != "" && (ns != "" || !namespaced) {
		p, err := s.o.Params.GetParam(ctx, gvr, ns, ref.Name)
		if err != nil {
			return nil
		}
		return []runtime.Object{p}
	}
	sel := labels.Everything()
	if ref.Selector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(ref.Selector); err != nil {
			return nil
		}
	}
	objs, err := s.o.Params.ListParams(ctx, gvr, ns, sel)
	if err != nil {
		return nil
	}
	if ref.Name == "" {
		return objs
	}
	var named []runtime.Object // a new slice: objs may be a cache's
	for _, o := range objs {
		if m, err := meta.Accessor(o); err == nil && m.GetName() == ref.Name {
			named = append(named, o)
		}
	}
	return named
}
