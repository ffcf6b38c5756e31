package yamlbound

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestCheck(t *testing.T) {
	long := `"` + strings.Repeat("x", 1<<20) + `"`
	for _, tc := range []struct {
		name, doc string
		ok        bool
	}{
		{"no alias", "a: b\nc: [1, 2]\n", true},
		{"a few aliases", "a: &a {b: c}\nd: [*a, *a]\n", true},
		{"star in a string", "verbs: ['*']\n", true},
		{"not YAML", "a: *missing\n", true},
		{"aliases of a long scalar", "a: &a " + long + "\nb: [" + strings.Repeat("*a, ", 4) + "*a]\n", false},
		{"aliases of aliases", "a: &a [" + long + "]\nb: &b [*a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b]\n", false},
	} {
		err := Check([]byte(tc.doc))
		if (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok %v", tc.name, err, tc.ok)
		}
		if err == nil && tc.ok {
			if _, err := yaml.YAMLToJSON([]byte(tc.doc)); err != nil && tc.name != "not YAML" {
				t.Errorf("%s: passed Check, but YAMLToJSON fails: %v", tc.name, err)
			}
		}
	}
}
