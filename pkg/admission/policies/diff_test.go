package policies_test

import (
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestDifferentialUpstream runs every golden case the upstream dispatchers
// can run in process (core kinds, ConfigMap params) through both
// implementations and requires the same outcome: response, warnings,
// audit annotations and final object.
func TestDifferentialUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("differential run against upstream's plugins: covered by the full (non -short) test run")
	}
	files, _ := filepath.Glob("testdata/*/case.yaml")
	ran := 0
	for _, file := range files {
		c := readCase(t, file)
		name := filepath.Base(filepath.Dir(file))
		if reason := upstreamCannotRun(c); reason != "" {
			t.Logf("%s: skipped (%s)", name, reason)
			continue
		}
		ran++
		t.Run(name, func(t *testing.T) {
			ours, err := yaml.Marshal(runCase(t, c))
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := yaml.Marshal(runUpstream(t, c))
			if err != nil {
				t.Fatal(err)
			}
			if string(ours) != string(theirs) {
				t.Errorf("%s\n--- admitd\n%s\n--- upstream\n%s", c.Description, ours, theirs)
			}
		})
	}
	if ran < 80 {
		t.Errorf("only %d cases ran against upstream", ran)
	}
}

// upstreamCannotRun says why the in-process oracle cannot run a case: it
// only knows the core kinds of client-go's scheme (no custom resources,
// no equivalent resources) and serves ConfigMap params.
func upstreamCannotRun(c *goldenCase) string {
	data, _ := yaml.Marshal(c)
	switch s := string(data); {
	case c.UpstreamUnordered != "":
		return "upstream order is unspecified: " + c.UpstreamUnordered
	case strings.Contains(s, "example.com/"):
		return "custom resources"
	case strings.Contains(s, "paramKind") && strings.Count(s, "kind: ConfigMap") < strings.Count(s, "paramKind"):
		return "non-ConfigMap paramKind"
	}
	return ""
}
