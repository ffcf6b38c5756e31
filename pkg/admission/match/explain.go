package match

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission"
)

// SkipName returns the admission trace's name (admission.Skip*) of a
// reason that is neither Matched nor Errored.
func (r Reason) SkipName() string {
	switch r {
	case SkipNamespaceSelector:
		return admission.SkipNamespaceSelector
	case SkipObjectSelector:
		return admission.SkipObjectSelector
	case SkipExcludeRule:
		return admission.SkipExcludeRule
	case SkipRule:
		return admission.SkipRule
	case SkipScope:
		return admission.SkipScope
	case SkipResourceName:
		return admission.SkipResourceName
	}
	return r.String()
}

// Why returns an explanation of d, a decision of c.Match(r) that is
// neither Matched nor Errored, for the admission trace. It keeps the values
// compared (the namespace's and objects' labels, the request's operation
// and resource) and formats them only when asked.
func (c *Criteria) Why(r *Request, d Decision) admission.Explainer {
	a := r.attrs
	w := &why{c: c, reason: d.Reason, op: string(a.Operation), group: a.Resource.Group, version: a.Resource.Version,
		resource: a.Resource.Resource, sub: a.Subresource, namespace: a.Namespace, name: a.Name}
	switch d.Reason {
	case SkipNamespaceSelector:
		if isNamespaceWrite(a) {
			w.labels = labelsOf(a.Object)
		} else {
			w.labels, _ = r.namespaceLabels()
		}
	case SkipObjectSelector:
		w.labels, w.oldLabels = labelsOf(a.Object), labelsOf(a.OldObject)
	}
	return w
}

// labelsOf copies obj's labels (a later plugin may change them in place).
func labelsOf(obj runtime.Object) map[string]string {
	if obj == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return maps.Clone(m.GetLabels())
}

type why struct {
	c                                                  *Criteria
	reason                                             Reason
	op, group, version, resource, sub, namespace, name string
	labels, oldLabels                                  map[string]string
}

func (w *why) Explain() string {
	switch w.reason {
	case SkipNamespaceSelector:
		return fmt.Sprintf("namespaceSelector %s does not select namespace %q (labels: %s)",
			selectorText(&w.c.namespace), w.namespace, labelsText(w.labels))
	case SkipObjectSelector:
		return fmt.Sprintf("objectSelector %s selects neither the object (labels: %s) nor the old object (labels: %s)",
			selectorText(&w.c.object), labelsText(w.labels), labelsText(w.oldLabels))
	case SkipExcludeRule:
		return fmt.Sprintf("excludeResourceRules %s match %s", rulesText(w.c.exclude), w.request())
	case SkipScope:
		return fmt.Sprintf("rules %s match %s except for their scope (the request is %s)", rulesText(w.c.rules), w.request(), w.scope())
	case SkipResourceName:
		return fmt.Sprintf("rules %s match %s except for their resourceNames (the name is %q)", rulesText(w.c.rules), w.request(), w.name)
	}
	return fmt.Sprintf("no rule of %s matches %s", rulesText(w.c.rules), w.request())
}

// request is "CREATE pods v1" or "UPDATE deployments/scale apps/v1".
func (w *why) request() string {
	res := w.resource
	if w.sub != "" {
		res += "/" + w.sub
	}
	gv := w.version
	if w.group != "" {
		gv = w.group + "/" + w.version
	}
	return w.op + " " + res + " " + gv
}

func (w *why) scope() string {
	if w.namespace != "" && !(w.group == "" && w.resource == "namespaces") {
		return "namespaced"
	}
	return "cluster-scoped"
}

// selectorText is a label selector in kubectl's syntax, quoted; the nil
// selector selects nothing.
func selectorText(s *selector) string {
	switch {
	case s.err != nil:
		return fmt.Sprintf("(invalid: %v)", s.err)
	case s.sel == nil:
		return "(none: selects nothing)"
	case s.every:
		return "{} (everything)"
	}
	return fmt.Sprintf("%q", s.sel.String())
}

func labelsText(l map[string]string) string {
	if len(l) == 0 {
		return "none"
	}
	keys := slices.Sorted(maps.Keys(l))
	for i, k := range keys {
		keys[i] = k + "=" + l[k]
	}
	return strings.Join(keys, ",")
}

// rulesText lists compiled rules as [CREATE,UPDATE apps/v1 deployments (Namespaced)].
func rulesText(rules []rule) string {
	if len(rules) == 0 {
		return "[]"
	}
	parts := make([]string, len(rules))
	for i := range rules {
		parts[i] = rules[i].String()
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// String renders a compiled rule for explanations.
func (c *rule) String() string {
	var ops []string
	if c.anyOp {
		ops = []string{"*"}
	} else {
		for _, o := range []struct {
			bit  opMask
			name string
		}{{opCreate, "CREATE"}, {opUpdate, "UPDATE"}, {opDelete, "DELETE"}, {opConnect, "CONNECT"}} {
			if c.ops&o.bit != 0 {
				ops = append(ops, o.name)
			}
		}
		ops = append(ops, c.otherOps...)
	}
	groups, versions := listText(c.anyGroup, c.groups, true), listText(c.anyVersion, c.versions, false)
	res := make([]string, len(c.resources))
	for i, p := range c.resources {
		res[i] = p.res
		if p.sub != "" {
			res[i] += "/" + p.sub
		}
	}
	s := fmt.Sprintf("%s %s/%s %s", strings.Join(ops, ","), groups, versions, strings.Join(res, ","))
	switch c.scope {
	case scopeNamespaced:
		s += " (Namespaced)"
	case scopeCluster:
		s += " (Cluster)"
	case scopeNone:
		s += " (unknown scope)"
	}
	if len(c.names) > 0 {
		s += " names " + strings.Join(c.names, ",")
	}
	return s
}

func listText(any bool, items []string, group bool) string {
	if any {
		return "*"
	}
	for i, s := range items {
		if s == "" && group {
			items = slices.Clone(items)
			items[i] = `""`
		}
	}
	return strings.Join(items, ",")
}
