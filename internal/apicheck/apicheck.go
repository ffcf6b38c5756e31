// Package apicheck computes the exported API of admitd's library packages
// (pkg/... and testenv) as sorted lines, one per exported name, field or
// method, in the manner of Go's own api/go1.*.txt files. Its test compares
// that surface with the checked-in api/admitd.txt, so a change to the
// library's API is a deliberate, reviewed edit.
//
// It reads source only (go/parser, no type checking): a var's type is shown
// only when it is written in the declaration, parameter names are left out,
// and methods promoted from embedded fields are not listed separately (the
// embedding is).
package apicheck

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
)

// Surface returns the exported API of every package under the given
// directories of the module at root (whose import path is module), sorted.
// Directories named internal or testdata, and everything under them, are
// skipped: they are not part of the library.
func Surface(root, module string, dirs ...string) ([]string, error) {
	var lines []string
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return err
			}
			if n := e.Name(); n == "internal" || n == "testdata" {
				return filepath.SkipDir
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			pkg, err := packageAPI(p, path.Join(module, filepath.ToSlash(rel)))
			lines = append(lines, pkg...)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// packageAPI returns the API lines of the package in dir, or nothing when
// dir holds no Go package.
func packageAPI(dir, importPath string) ([]string, error) {
	bp, err := build.ImportDir(dir, 0)
	if _, none := err.(*build.NoGoError); none {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	w := &walker{fset: fset, prefix: "pkg " + importPath + ", "}
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		w.file(f)
	}
	return w.lines, nil
}

// walker collects the lines of one package.
type walker struct {
	fset   *token.FileSet
	prefix string
	lines  []string
}

func (w *walker) emit(format string, args ...any) {
	w.lines = append(w.lines, w.prefix+fmt.Sprintf(format, args...))
}

func (w *walker) file(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			w.funcDecl(d)
		case *ast.GenDecl:
			w.genDecl(d)
		}
	}
}

func (w *walker) funcDecl(d *ast.FuncDecl) {
	if !d.Name.IsExported() {
		return
	}
	if d.Recv == nil {
		w.emit("func %s%s", d.Name.Name, w.signature(d.Type))
		return
	}
	recv := d.Recv.List[0].Type
	if !ast.IsExported(baseTypeName(recv)) {
		return
	}
	w.emit("method (%s) %s%s", w.node(recv), d.Name.Name, w.signature(d.Type))
}

func (w *walker) genDecl(d *ast.GenDecl) {
	var lastType ast.Expr // a const spec without type or values repeats the previous one's
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.ValueSpec:
			if s.Type != nil || len(s.Values) > 0 {
				lastType = s.Type
			}
			w.valueSpec(d.Tok, s, lastType)
		case *ast.TypeSpec:
			w.typeSpec(s)
		}
	}
}

func (w *walker) valueSpec(tok token.Token, s *ast.ValueSpec, typ ast.Expr) {
	if tok == token.VAR {
		typ = s.Type
	}
	for _, n := range s.Names {
		if !n.IsExported() {
			continue
		}
		if typ == nil {
			w.emit("%s %s", tok, n.Name)
		} else {
			w.emit("%s %s %s", tok, n.Name, w.node(typ))
		}
	}
}

// Diff returns the lines of want missing from got (removed from the API,
// which breaks its users) and those of got missing from want (added). Both
// inputs are sorted.
func Diff(want, got []string) (removed, added []string) {
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || (i < len(want) && want[i] < got[j]):
			removed = append(removed, want[i])
			i++
		case i == len(want) || got[j] < want[i]:
			added = append(added, got[j])
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return removed, added
}
