package apicheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLibraryImportsNoInternal keeps the library usable on its own: no
// non-test file under pkg/ imports a package under the module's internal/
// (Go would allow it, since both are in this module).
func TestLibraryImportsNoInternal(t *testing.T) {
	internal := module + "/internal/"
	err := filepath.WalkDir(filepath.Join(moduleRoot, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, internal) {
				t.Errorf("%s imports %s: pkg/ must not depend on internal/", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
