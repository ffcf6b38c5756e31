package openapi

import (
	"bytes"
	"sort"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// gvkNamer knows, per model name, the kinds the scheme registers its type
// as: the x-kubernetes-group-version-kind extension of upstream's
// definitions.
type gvkNamer map[string][]schema.GroupVersionKind

func newGVKNamer(scheme *runtime.Scheme) gvkNamer {
	n := gvkNamer{}
	for gvk, t := range scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		name := modelName(t)
		n[name] = append(n[name], gvk)
	}
	for _, gvks := range n {
		sort.Slice(gvks, func(i, j int) bool {
			a, b := gvks[i], gvks[j]
			if a.Group != b.Group {
				return a.Group < b.Group
			}
			if a.Version != b.Version {
				return a.Version < b.Version
			}
			return a.Kind < b.Kind
		})
	}
	return n
}

// extensions returns the x-kubernetes-group-version-kind of a model, or
// nil; in the document of doc, see builder.withGVK.
func (n gvkNamer) extensions(name string, doc *schema.GroupVersion) spec.Extensions {
	gvks := n[name]
	if len(gvks) == 0 {
		return nil
	}
	if doc != nil {
		var inDoc []schema.GroupVersionKind
		for _, gvk := range gvks {
			if gv := gvk.GroupVersion(); gv == *doc || gv == (schema.GroupVersion{Version: "v1"}) {
				inDoc = append(inDoc, gvk)
			}
		}
		if len(inDoc) > 0 {
			gvks = inDoc
		}
	}
	list := make([]any, len(gvks))
	for i, gvk := range gvks {
		list[i] = map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}
	}
	return spec.Extensions{"x-kubernetes-group-version-kind": list}
}

// operationVerbs are the verbs an operation name starts with, longest first
// where one is a prefix of another.
var operationVerbs = []string{"deletecollection", "delete", "create", "connect", "get", "list", "log", "patch", "proxy", "read", "replace", "watch"}

// operationID folds the group and version into an operation name as
// upstream does (readNamespacedPod under /api/v1 -> readCoreV1NamespacedPod)
// and returns the operation's tag (core_v1).
func operationID(op, path string) (string, string) {
	verb := ""
	for _, v := range operationVerbs {
		if strings.HasPrefix(op, v) {
			verb = v
			break
		}
	}
	if verb == "" {
		return op, ""
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) >= 1 && parts[0] == "api" {
		parts = append([]string{"apis", "core"}, parts[1:]...)
	}
	prefix, tag := verb, ""
	switch {
	case len(parts) >= 2 && parts[0] == "apis":
		group := strings.TrimSuffix(parts[1], ".k8s.io")
		prefix += validOperationID(group, true)
		tag = validOperationID(group, false)
		if len(parts) > 2 {
			prefix += validOperationID(parts[2], true)
			tag += "_" + validOperationID(parts[2], false)
		}
	case len(parts) >= 1:
		tag = validOperationID(parts[0], false)
	}
	return prefix + validOperationID(op[len(verb):], true), tag
}

// validOperationID keeps letters, underscores and (after the first rune)
// digits, capitalising the rune after each dropped one (and the first when
// asked).
func validOperationID(s string, capitalizeFirst bool) string {
	var b bytes.Buffer
	capitalize := capitalizeFirst
	for i, r := range s {
		if unicode.IsLetter(r) || r == '_' || (i != 0 && unicode.IsDigit(r)) {
			if capitalize {
				r = unicode.ToUpper(r)
				capitalize = false
			}
			b.WriteRune(r)
			continue
		}
		capitalize = true
	}
	return b.String()
}
