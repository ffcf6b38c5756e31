package defaults

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// TestEmptyObjectDefaultsLikeUpstream: the empty object of every kind
// admitd serves, in every version, defaults as upstream's.
func TestEmptyObjectDefaultsLikeUpstream(t *testing.T) {
	kinds, byKind := servedKinds(allVersionsCatalogue(t))
	for _, gvk := range kinds {
		obj, err := upstreamScheme(gvk.Group).New(gvk)
		if err != nil {
			t.Fatalf("%v: %v", gvk, err)
		}
		if d := difference(byKind[gvk], obj); d != "" {
			t.Errorf("%v: the empty object defaults differently (-upstream +admitd):\n%s", gvk, firstLines(d, 60))
		}
	}
}

// TestMinimalObjectDefaultsLikeUpstream: nearly empty objects that reach
// the nested defaults (a container, a port, a volume of each source, a
// rule, a webhook, a subject, a strategy named but not filled) default as
// upstream's. Each document names its own apiVersion and kind.
func TestMinimalObjectDefaultsLikeUpstream(t *testing.T) {
	cat := allVersionsCatalogue(t)
	_, byKind := servedKinds(cat)
	seen := 0
	for _, doc := range strings.Split(minimalObjects, "\n---\n") {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		gvk := schema.FromAPIVersionAndKind(head.APIVersion, head.Kind)
		res := byKind[gvk]
		if res == nil {
			t.Errorf("%v: not served", gvk)
			continue
		}
		obj, err := upstreamScheme(gvk.Group).New(gvk)
		if err != nil {
			t.Fatalf("%v: %v", gvk, err)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if d := difference(res, obj); d != "" {
			t.Errorf("%v %s: defaults differently (-upstream +admitd):\n%s", gvk, firstLine(doc), firstLines(d, 60))
		}
		seen++
	}
	t.Logf("%d minimal objects compared", seen)
}

func firstLine(doc string) string {
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "# ") {
			return l[2:]
		}
	}
	return ""
}
