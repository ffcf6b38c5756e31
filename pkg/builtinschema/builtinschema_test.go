package builtinschema

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

var updateSchema = flag.Bool("update-schema", false, "regenerate schema_gen.go from client-go's applyconfigurations")

// clientGoSchemaYAML reads the schema YAML of client-go's
// applyconfigurations from the source of the client-go this module
// builds with (an internal package: not importable).
func clientGoSchemaYAML(t *testing.T) string {
	t.Helper()
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/client-go").Output()
	if err != nil {
		t.Fatalf("locating k8s.io/client-go: %v", err)
	}
	file := filepath.Join(strings.TrimSpace(string(dir)), "applyconfigurations", "internal", "internal.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var yaml string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || spec.Names[0].Name != "schemaYAML" || len(spec.Values) != 1 {
			return true
		}
		if call, ok := spec.Values[0].(*ast.CallExpr); ok && len(call.Args) == 1 {
			if lit, ok := call.Args[0].(*ast.BasicLit); ok {
				yaml, err = strconv.Unquote(lit.Value)
			}
		}
		return false
	})
	if yaml == "" || err != nil {
		t.Fatalf("no schemaYAML literal in %s (%v)", file, err)
	}
	return yaml
}

// The generated schema is exactly what client-go's YAML parses to.
func TestBuiltinSchemaCurrent(t *testing.T) {
	want, err := typed.NewParser(typed.YAMLObject(clientGoSchemaYAML(t)))
	if err != nil {
		t.Fatal(err)
	}
	if *updateSchema {
		src, err := schemaSource(&want.Schema)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("schema_gen.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("schema_gen.go written; run the test again to check it")
		return
	}
	// The file, not the literal compiled from it: a parser that has been
	// used has filled the lazy indexes inside the literal's maps.
	src, err := schemaSource(&want.Schema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("schema_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(builtinTypes) == 0 || !bytes.Equal(got, src) {
		t.Fatal("schema_gen.go differs from client-go's applyconfigurations schema; regenerate: go test ./pkg/builtinschema -run TestBuiltinSchemaCurrent -update-schema")
	}
}

// The parser resolves a built-in kind through the generated schema.
func TestParserTypesAnObject(t *testing.T) {
	pt := Parser().Type("io.k8s.api.core.v1.ConfigMap")
	obj, err := pt.FromUnstructured(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"k": "v"}}, "data": map[string]any{"x": "y"}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := obj.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []fieldpath.Path{fieldpath.MakePathOrDie("data", "x"), fieldpath.MakePathOrDie("metadata", "labels", "k")} {
		if !set.Has(path) {
			t.Errorf("no %s in the object's fields:\n%s", path, set)
		}
	}
	if _, err := pt.FromUnstructured(map[string]any{"data": map[string]any{"x": 1}}); err == nil {
		t.Fatal("a number in a ConfigMap's data was accepted")
	}
}
