package apicheck

import (
	"bytes"
	"go/ast"
	"go/printer"
	"strings"
)

func (w *walker) typeSpec(s *ast.TypeSpec) {
	if !s.Name.IsExported() {
		return
	}
	name := s.Name.Name + w.typeParams(s.TypeParams)
	if s.Assign.IsValid() {
		w.emit("type %s = %s", name, w.node(s.Type))
		return
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		w.emit("type %s struct", name)
		for _, f := range t.Fields.List {
			w.field("type "+name+" struct", f)
		}
	case *ast.InterfaceType:
		w.emit("type %s interface", name)
		for _, m := range t.Methods.List {
			w.interfaceElem("type "+name+" interface", m)
		}
	default:
		w.emit("type %s %s", name, w.node(s.Type))
	}
}

// field emits an exported field or embedding of a struct.
func (w *walker) field(owner string, f *ast.Field) {
	if len(f.Names) == 0 {
		if ast.IsExported(baseTypeName(f.Type)) {
			w.emit("%s, embedded %s", owner, w.node(f.Type))
		}
		return
	}
	for _, n := range f.Names {
		if n.IsExported() {
			w.emit("%s, %s %s", owner, n.Name, w.node(f.Type))
		}
	}
}

// interfaceElem emits a method, an embedded interface or a type set.
func (w *walker) interfaceElem(owner string, m *ast.Field) {
	if len(m.Names) == 0 {
		w.emit("%s, embedded %s", owner, w.node(m.Type))
		return
	}
	for _, n := range m.Names {
		if ft, ok := m.Type.(*ast.FuncType); ok && n.IsExported() {
			w.emit("%s, %s%s", owner, n.Name, w.signature(ft))
		}
	}
}

// signature prints a function type without parameter names:
// "(int, ...string) (bool, error)".
func (w *walker) signature(ft *ast.FuncType) string {
	s := w.typeParams(ft.TypeParams) + "(" + w.types(ft.Params) + ")"
	switch r := w.types(ft.Results); {
	case r == "":
	case ft.Results.NumFields() == 1:
		s += " " + r
	default:
		s += " (" + r + ")"
	}
	return s
}

func (w *walker) typeParams(fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	var out []string
	for _, f := range fl.List {
		for _, n := range f.Names {
			out = append(out, n.Name+" "+w.node(f.Type))
		}
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// types prints the type of every name of fl, comma-separated.
func (w *walker) types(fl *ast.FieldList) string {
	if fl == nil {
		return ""
	}
	var out []string
	for _, f := range fl.List {
		t := w.node(f.Type)
		for range max(1, len(f.Names)) {
			out = append(out, t)
		}
	}
	return strings.Join(out, ", ")
}

// node prints an expression on one line.
func (w *walker) node(n ast.Node) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, w.fset, n); err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// baseTypeName is the name of a (possibly pointer, qualified or generic)
// type expression: "T" for *T, pkg.T, T[K].
func baseTypeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return baseTypeName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.IndexExpr:
		return baseTypeName(t.X)
	case *ast.IndexListExpr:
		return baseTypeName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}
