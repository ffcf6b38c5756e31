package audit

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestStandardInputIsReadAsAFile: "-" is a copy of standard input, read
// as files are (a List's items one at a time, named <stdin>), seeded from
// and audited, and removed by Close.
func TestStandardInputIsReadAsAFile(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.yaml")
	list := "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata: {name: prod, labels: {env: prod}}\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: loose, namespace: prod}\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: good, namespace: dev, labels: {team: a}}\nkind: List\nmetadata: {}\n"
	if err := os.WriteFile(in, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	saved := os.Stdin
	os.Stdin = stdin
	src, err := LoadFiles("-", "-")
	os.Stdin = saved
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), src, Options{Config: objects(t, policies)})
	if err != nil {
		t.Fatal(err)
	}
	copied := src.stdin
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(copied); !os.IsNotExist(err) {
		t.Errorf("the copy of standard input %s is still there (%v)", copied, err)
	}
	if r.Objects != 3 {
		t.Errorf("audited %d objects, want 3 (standard input read once)", r.Objects)
	}
	denied := find(t, r, "ValidatingAdmissionPolicy", "require-team", "prod").Denied
	if len(denied) != 1 || denied[0].Object.Name != "loose" || denied[0].Object.Source != "<stdin>#1.items[1]" {
		t.Errorf("denied %+v, want prod/loose from <stdin>#1.items[1] (the namespace's labels seeded from standard input)", denied)
	}
	seed, err := src.Seed(context.Background(), Params{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range seed {
		names = append(names, o.GetKind()+" "+o.GetName())
	}
	if want := []string{"Namespace prod", "Namespace dev"}; !slices.Equal(names, want) {
		t.Errorf("seed %v, want %v", names, want)
	}
}
