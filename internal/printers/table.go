// Package printers renders objects as meta.k8s.io/v1 Tables with the columns
// upstream's API server prints for each kind: what `kubectl get` shows against
// a real cluster. Built-in kinds follow kubernetes/kubernetes
// pkg/printers/internalversion, custom resources their CRD version's
// additionalPrinterColumns, and every other kind upstream's default
// convertor (Name, Created At).
//
// Like upstream's server-side convertor it always fills the priority-1 cells;
// kubectl shows those columns only with -o wide. It does not read storage:
// each Table is built from the objects it is given (see the StorageClass
// "(default)" note in cluster.go).
package printers

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// Options control what each row carries besides its cells.
type Options struct {
	// IncludeObject is the row's object: metav1.IncludeMetadata (the
	// default, also for "") embeds a PartialObjectMetadata, metav1.IncludeObject
	// the object as given, metav1.IncludeNone nothing.
	IncludeObject metav1.IncludeObjectPolicy
}

// printer is the table layout of one kind.
type printer struct {
	columns []metav1.TableColumnDefinition
	// row computes one row's cells (and conditions) at time now.
	row func(obj runtime.Object, now time.Time) (metav1.TableRow, error)
	// finish, when set, adjusts the rows once all are built.
	finish func(rows []metav1.TableRow, objs []runtime.Object)
}

// Table renders objs, all of resource res, as a Table. now is the time ages
// are measured from.
func Table(res *registry.Resource, objs []runtime.Object, now time.Time, opts Options) *metav1.Table {
	b := NewTableBuilder(res, now, opts)
	b.table.Rows = make([]metav1.TableRow, 0, len(objs))
	for _, obj := range objs {
		b.Add(obj)
	}
	return b.Table()
}

// TableBuilder makes a table a row at a time, so that a list's objects need
// not be held together: it keeps only the rows, and the objects too for
// the few kinds whose rows are finished over all of them (the default
// class marked, flow schemas ordered).
type TableBuilder struct {
	p     printer
	now   time.Time
	opts  Options
	table *metav1.Table
	objs  []runtime.Object
}

// NewTableBuilder starts a table of res's kind.
func NewTableBuilder(res *registry.Resource, now time.Time, opts Options) *TableBuilder {
	return newTableBuilder(printerFor(res), now, opts)
}

func newTableBuilder(p printer, now time.Time, opts Options) *TableBuilder {
	return &TableBuilder{p: p, now: now, opts: opts, table: &metav1.Table{
		TypeMeta:          metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"},
		ColumnDefinitions: slices.Clone(p.columns), // callers may edit them
		Rows:              []metav1.TableRow{},
	}}
}

// Add makes obj's row.
func (b *TableBuilder) Add(obj runtime.Object) {
	b.table.Rows = append(b.table.Rows, b.Row(obj))
	if b.p.finish != nil {
		b.objs = append(b.objs, obj)
	}
}

// Row is obj's row, which the table does not keep: when RowsStandAlone,
// a caller may write a table's rows as they are made, after the table
// without rows.
func (b *TableBuilder) Row(obj runtime.Object) metav1.TableRow {
	row, err := b.p.row(obj, b.now)
	if err != nil {
		row = placeholderRow(b.p.columns, obj)
	}
	row.Object = rowObject(obj, b.opts.IncludeObject)
	return row
}

// RowsStandAlone reports whether each row is final once made (not
// finished over all of them).
func (b *TableBuilder) RowsStandAlone() bool { return b.p.finish == nil }

// Table is the table of the rows added.
func (b *TableBuilder) Table() *metav1.Table {
	if b.p.finish != nil {
		b.p.finish(b.table.Rows, b.objs)
	}
	return b.table
}

// then returns p with finish set.
func (p printer) then(finish func(rows []metav1.TableRow, objs []runtime.Object)) printer {
	p.finish = finish
	return p
}

// printerFor picks the layout of a resource: the kind's printer, the CRD's
// columns, or upstream's default.
func printerFor(res *registry.Resource) printer {
	if res.Unstructured {
		return customPrinter(res.PrinterColumns)
	}
	if p, ok := builtinPrinters[res.GroupResource()]; ok {
		return p
	}
	return defaultPrinter
}

// placeholderRow is the row of an object its kind's printer cannot read (a
// type that does not convert): its name in the name column, nothing else.
func placeholderRow(cols []metav1.TableColumnDefinition, obj runtime.Object) metav1.TableRow {
	cells := make([]any, len(cols))
	if m, err := meta.Accessor(obj); err == nil {
		for i, c := range cols {
			if c.Format == "name" {
				cells[i] = m.GetName()
				break
			}
		}
	}
	return metav1.TableRow{Cells: cells}
}

// rowObject is what a row embeds, following includeObject as upstream does.
func rowObject(obj runtime.Object, policy metav1.IncludeObjectPolicy) runtime.RawExtension {
	switch policy {
	case metav1.IncludeObject:
		return runtime.RawExtension{Object: obj}
	case metav1.IncludeNone:
		return runtime.RawExtension{}
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return runtime.RawExtension{}
	}
	partial := meta.AsPartialObjectMetadata(m)
	partial.TypeMeta = metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"}
	return runtime.RawExtension{Object: partial}
}

// kind builds the printer of a k8s.io/api type from a cells function. Objects
// of another type (an *unstructured.Unstructured, another version) are
// converted first.
func kind[T any, P interface {
	*T
	runtime.Object
}](cols []metav1.TableColumnDefinition, cells func(P, time.Time) []any) printer {
	return kindRow(cols, func(obj P, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: cells(obj, now)}
	})
}

// kindRow is kind for printers that also set row conditions.
func kindRow[T any, P interface {
	*T
	runtime.Object
}](cols []metav1.TableColumnDefinition, row func(P, time.Time) metav1.TableRow) printer {
	return printer{columns: cols, row: func(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
		typed, err := as[T, P](obj)
		if err != nil {
			return metav1.TableRow{}, err
		}
		return row(typed, now), nil
	}}
}

// as returns obj as a P, converting through its unstructured form when it is
// of another Go type.
func as[T any, P interface {
	*T
	runtime.Object
}](obj runtime.Object) (P, error) {
	if typed, ok := obj.(P); ok {
		return typed, nil
	}
	var content map[string]any
	if u, ok := obj.(runtime.Unstructured); ok {
		content = u.UnstructuredContent()
	} else {
		c, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		content = c
	}
	out := P(new(T))
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, out); err != nil {
		return nil, fmt.Errorf("printing %T as %T: %w", obj, out, err)
	}
	return out, nil
}

// defaultPrinter is upstream's convertor for kinds without a printer
// (k8s.io/apiserver pkg/registry/rest/table.go): Name and an RFC 3339
// creation time.
var defaultPrinter = printer{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Created At", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
	},
	row: func(obj runtime.Object, _ time.Time) (metav1.TableRow, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return metav1.TableRow{}, err
		}
		created := m.GetCreationTimestamp().Time.UTC().Format(time.RFC3339)
		return metav1.TableRow{Cells: []any{m.GetName(), created}}, nil
	},
}
