package audit

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/evaluate"
)

// Params are the objects a configuration's policy bindings may read as
// their params: objects of a policy's paramKind that a binding's paramRef
// names or selects. The audited objects among them seed the evaluation,
// so that every object is evaluated with the params the cluster has,
// whatever the order the objects come in.
type Params struct {
	refs []paramRef
}

// paramRef is what one binding may read: objects of kind in namespace
// (when empty: the request's, so any) named name, or (when name is empty)
// picked by selector (nil: any).
type paramRef struct {
	kind            schema.GroupVersionKind
	namespace, name string
	selector        labels.Selector
}

// ParamsOf reads the params the bindings of config may read.
func ParamsOf(config []evaluate.Object) Params {
	paramKinds := map[string]schema.GroupVersionKind{} // policy kind + name → param kind
	for _, o := range config {
		if !isAdmissionKind(o, "Policy") {
			continue
		}
		apiVersion, _, _ := unstructured.NestedString(o.Object, "spec", "paramKind", "apiVersion")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "paramKind", "kind")
		if kind == "" {
			continue
		}
		gv, _ := schema.ParseGroupVersion(apiVersion)
		paramKinds[o.GetKind()+"/"+o.GetName()] = gv.WithKind(kind)
	}
	var p Params
	for _, o := range config {
		if !isAdmissionKind(o, "PolicyBinding") {
			continue
		}
		policy, _, _ := unstructured.NestedString(o.Object, "spec", "policyName")
		kind, ok := paramKinds[strings.TrimSuffix(o.GetKind(), "Binding")+"/"+policy]
		if !ok {
			continue
		}
		ref := paramRef{kind: kind}
		ref.namespace, _, _ = unstructured.NestedString(o.Object, "spec", "paramRef", "namespace")
		ref.name, _, _ = unstructured.NestedString(o.Object, "spec", "paramRef", "name")
		if sel, ok, _ := unstructured.NestedMap(o.Object, "spec", "paramRef", "selector"); ok && ref.name == "" {
			ref.selector = selectorOf(sel)
		}
		p.refs = append(p.refs, ref)
	}
	return p
}

func isAdmissionKind(o evaluate.Object, suffix string) bool {
	return o.GroupVersionKind().Group == "admissionregistration.k8s.io" && strings.HasSuffix(o.GetKind(), suffix)
}

// selectorOf is a paramRef's selector; nil (any object) when it does not
// parse, which the server refuses anyway.
func selectorOf(m map[string]any) labels.Selector {
	var ls metav1.LabelSelector
	if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls) != nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil
	}
	return sel
}

// Empty reports whether no binding reads params.
func (p Params) Empty() bool { return len(p.refs) == 0 }

// Match reports whether a binding may read obj as its params.
func (p Params) Match(obj evaluate.Object) bool {
	if obj.Unstructured == nil {
		return false
	}
	gk := obj.GroupVersionKind().GroupKind()
	for _, r := range p.refs {
		if r.kind.GroupKind() != gk || r.namespace != "" && r.namespace != obj.GetNamespace() {
			continue
		}
		switch {
		case r.name != "":
			if r.name == obj.GetName() {
				return true
			}
		case r.selector == nil || r.selector.Matches(labels.Set(obj.GetLabels())):
			return true
		}
	}
	return false
}

// Kinds are the kinds of the params, each once, in the bindings' order.
func (p Params) Kinds() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	seen := map[schema.GroupVersionKind]bool{}
	for _, r := range p.refs {
		if !seen[r.kind] {
			seen[r.kind] = true
			out = append(out, r.kind)
		}
	}
	return out
}
