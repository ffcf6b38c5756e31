package builtinschema

import (
	"bytes"
	"encoding/gob"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

var updateSchema = flag.Bool("update-schema", false, "regenerate builtin_schema.gob from client-go's applyconfigurations")

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

// The embedded schema is exactly what client-go's YAML parses to.
func TestBuiltinSchemaCurrent(t *testing.T) {
	p, err := typed.NewParser(typed.YAMLObject(clientGoSchemaYAML(t)))
	if err != nil {
		t.Fatal(err)
	}
	if *updateSchema {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(&p.Schema); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("builtin_schema.gob", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		builtinSchemaGob = buf.Bytes()
	}
	got, err := decode(builtinSchemaGob)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Schema.Types) == 0 || !reflect.DeepEqual(got.Schema.Types, p.Schema.Types) {
		t.Fatal("builtin_schema.gob differs from client-go's applyconfigurations schema; regenerate: go test ./pkg/builtinschema -run TestBuiltinSchemaCurrent -update-schema")
	}
}

func BenchmarkDecode(b *testing.B) {
	for b.Loop() {
		if _, err := decode(builtinSchemaGob); err != nil {
			b.Fatal(err)
		}
	}
}
