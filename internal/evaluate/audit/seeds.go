package audit

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/admitd/admitd/internal/evaluate"
)

// seeds collects what the evaluation is seeded with: the namespaces,
// CRDs and other seeded kinds (seeded) among the objects, their params,
// and a namespace for every namespace an object is in. What it holds does not depend on the order
// the objects come in.
type seeds struct {
	// kept are the objects seeded, by kind and name.
	kept map[string]evaluate.Object
	// namespaces are the namespaces of the objects, each with the least
	// source of an object in it.
	namespaces map[string]string
}

// note keeps o when it is of a seeded kind, and its namespace.
func (s *seeds) note(o evaluate.Object) {
	if seeded(o.GroupVersionKind()) {
		s.keep(o)
	}
	ns := o.GetNamespace()
	if ns == "" {
		return
	}
	if s.namespaces == nil {
		s.namespaces = map[string]string{}
	}
	if src, ok := s.namespaces[ns]; !ok || o.Source < src {
		s.namespaces[ns] = o.Source
	}
}

// keep seeds o. Of two objects of the same kind and name, the one whose
// JSON comes first is kept: a choice that does not depend on their order.
func (s *seeds) keep(o evaluate.Object) {
	if s.kept == nil {
		s.kept = map[string]evaluate.Object{}
	}
	k := objectKey(o)
	if had, ok := s.kept[k]; ok && !before(o, had) {
		return
	}
	s.kept[k] = o
}

func objectKey(o evaluate.Object) string {
	gvk := o.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + " " + o.GetNamespace() + "/" + o.GetName()
}

// before orders two objects of the same kind and name by their JSON, then
// their sources.
func before(a, b evaluate.Object) bool {
	ja, _ := json.Marshal(a.Object)
	jb, _ := json.Marshal(b.Object)
	if c := bytes.Compare(ja, jb); c != 0 {
		return c < 0
	}
	return a.Source < b.Source
}

func (s seeds) clone() seeds {
	return seeds{kept: maps.Clone(s.kept), namespaces: maps.Clone(s.namespaces)}
}

// objects are the objects kept, then a namespace without labels for
// every other namespace an object is in, each in name order.
func (s *seeds) objects() []evaluate.Object {
	var out []evaluate.Object
	for _, k := range slices.Sorted(maps.Keys(s.kept)) {
		out = append(out, s.kept[k])
	}
	for _, ns := range slices.Sorted(maps.Keys(s.namespaces)) {
		if _, ok := s.kept["/Namespace /"+ns]; !ok {
			out = append(out, namespace(ns, "a namespace of "+s.namespaces[ns]))
		}
	}
	return out
}
