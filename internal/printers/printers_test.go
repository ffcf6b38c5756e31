package printers

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

// now is the time every test table is rendered at; objects are created
// five minutes before unless a case says otherwise.
var (
	now     = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	created = metav1.NewTime(now.Add(-5 * time.Minute))
)

func objMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: created}
}

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

// catalogue is the real resource catalogue: tests render tables for the
// resources admitd serves.
var catalogue = registry.NewCatalogue()

func lookup(t *testing.T, group, version, resource string) *registry.Resource {
	t.Helper()
	res, ok := catalogue.Lookup(schema.GroupVersionResource{Group: group, Version: version, Resource: resource})
	if !ok {
		t.Fatalf("no resource %s/%s %s in the catalogue", group, version, resource)
	}
	return res
}

// columnNames lists a table's column names, priority-1 (-o wide) ones
// prefixed with "+".
func columnNames(tbl *metav1.Table) []string {
	out := make([]string, len(tbl.ColumnDefinitions))
	for i, c := range tbl.ColumnDefinitions {
		out[i] = c.Name
		if c.Priority == 1 {
			out[i] = "+" + c.Name
		}
	}
	return out
}

// cellCase is one object and the cells upstream prints for it.
type cellCase struct {
	name       string
	obj        runtime.Object
	cells      []any
	conditions []metav1.TableRowCondition
}

// checkKind renders each case's object as a one-row table of res and
// compares the columns and the row with upstream's.
func checkKind(t *testing.T, res *registry.Resource, columns []string, cases []cellCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tbl := Table(res, []runtime.Object{tc.obj}, now, Options{})
			if got := columnNames(tbl); !reflect.DeepEqual(got, columns) {
				t.Fatalf("Table(%s) columns = %q, want %q", res.Resource, got, columns)
			}
			if len(tbl.Rows) != 1 {
				t.Fatalf("Table(%s) has %d rows, want 1", res.Resource, len(tbl.Rows))
			}
			row := tbl.Rows[0]
			if !reflect.DeepEqual(row.Cells, tc.cells) {
				t.Errorf("Table(%s) cells =\n  %#v\nwant\n  %#v", res.Resource, row.Cells, tc.cells)
			}
			if !reflect.DeepEqual(row.Conditions, tc.conditions) {
				t.Errorf("Table(%s) conditions = %v, want %v", res.Resource, row.Conditions, tc.conditions)
			}
		})
	}
}

func TestTableEnvelope(t *testing.T) {
	res := lookup(t, "", "v1", "configmaps")
	cm := &corev1.ConfigMap{ObjectMeta: objMeta("settings"), Data: map[string]string{"a": "1"}}
	cm.Labels = map[string]string{"app": "web"}

	tbl := Table(res, nil, now, Options{})
	if tbl.Kind != "Table" || tbl.APIVersion != "meta.k8s.io/v1" {
		t.Errorf("Table TypeMeta = %v, want meta.k8s.io/v1 Table", tbl.TypeMeta)
	}
	if tbl.Rows == nil || len(tbl.Rows) != 0 {
		t.Errorf("Table(no objects).Rows = %#v, want an empty, non-nil slice", tbl.Rows)
	}

	tests := []struct {
		policy metav1.IncludeObjectPolicy
		check  func(obj runtime.Object) bool
	}{
		{"", func(obj runtime.Object) bool {
			p, ok := obj.(*metav1.PartialObjectMetadata)
			return ok && p.Kind == "PartialObjectMetadata" && p.APIVersion == "meta.k8s.io/v1" &&
				p.Name == "settings" && p.Namespace == "default" && p.Labels["app"] == "web"
		}},
		{metav1.IncludeMetadata, func(obj runtime.Object) bool { _, ok := obj.(*metav1.PartialObjectMetadata); return ok }},
		{metav1.IncludeObject, func(obj runtime.Object) bool { return obj == runtime.Object(cm) }},
		{metav1.IncludeNone, func(obj runtime.Object) bool { return obj == nil }},
	}
	for _, tc := range tests {
		tbl := Table(res, []runtime.Object{cm}, now, Options{IncludeObject: tc.policy})
		if got := tbl.Rows[0].Object.Object; !tc.check(got) {
			t.Errorf("Table(includeObject=%q) row object = %#v, want upstream's", tc.policy, got)
		}
	}
}

// TestDefaultColumns: kinds without an upstream printer get the default
// convertor's Name and RFC 3339 Created At (k8s.io/apiserver
// pkg/registry/rest/table.go), as `kubectl get clusterroles` shows.
func TestDefaultColumns(t *testing.T) {
	kinds := []struct {
		group, version, resource string
		obj                      runtime.Object
	}{
		{"rbac.authorization.k8s.io", "v1", "clusterroles", &rbacv1.ClusterRole{ObjectMeta: objMeta("admin")}},
		{"rbac.authorization.k8s.io", "v1", "roles", &rbacv1.Role{ObjectMeta: objMeta("admin")}},
		{"", "v1", "limitranges", &corev1.LimitRange{ObjectMeta: objMeta("admin")}},
	}
	for _, k := range kinds {
		checkKind(t, lookup(t, k.group, k.version, k.resource), []string{"Name", "Created At"}, []cellCase{
			{name: k.resource, obj: k.obj, cells: []any{"admin", "2026-03-01T11:55:00Z"}},
		})
	}
}

// CustomResourceDefinitions print as apiextensions-apiserver 1.37's table
// convertor (recorded from kube-apiserver 1.37.2): served versions sorted,
// the storage one marked, the creation time as a date.
func TestCustomResourceDefinitionColumns(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com", "creationTimestamp": created.UTC().Format(time.RFC3339)},
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "kind": "Widget", "shortNames": []any{"wd", "w"}},
			"versions": []any{
				map[string]any{"name": "v2", "served": true, "storage": false},
				map[string]any{"name": "v1", "served": true, "storage": true},
				map[string]any{"name": "v0", "served": false, "storage": false}}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Established", "status": "True"}}},
	}}
	checkKind(t, lookup(t, "apiextensions.k8s.io", "v1", "customresourcedefinitions"),
		[]string{"Name", "Scope", "Versions", "Created At", "+Group", "+Kind", "+ShortNames", "+Established"}, []cellCase{
			{name: "widgets", obj: u, cells: []any{"widgets.example.com", "Namespaced", "v1(storage),v2", "2026-03-01T11:55:00Z",
				"example.com", "Widget", "wd,w", true}},
		})
}

// TestConvertsOtherTypes: a built-in printer reads an object of another Go
// type (here unstructured) through its unstructured form.
func TestConvertsOtherTypes(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "creationTimestamp": created.UTC().Format(time.RFC3339)},
		"data":     map[string]any{"a": "1", "b": "2"},
	}}
	checkKind(t, lookup(t, "", "v1", "configmaps"), []string{"Name", "Data", "Age"}, []cellCase{
		{name: "unstructured", obj: u, cells: []any{"settings", int64(2), "5m"}},
	})
}

// TestUnreadableObject: an object the printer cannot read still gets a row,
// with its name in the name column.
func TestUnreadableObject(t *testing.T) {
	res := lookup(t, "", "v1", "configmaps")
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "odd"}, "data": "not a map",
	}}
	tbl := Table(res, []runtime.Object{u}, now, Options{})
	if want := []any{"odd", nil, nil}; !reflect.DeepEqual(tbl.Rows[0].Cells, want) {
		t.Errorf("Table(unreadable configmap) cells = %#v, want %#v", tbl.Rows[0].Cells, want)
	}
}

// TestEveryBuiltinResource checks an invariant of every served kind: an
// empty object renders one cell per column, without panicking, and every
// column is well formed.
func TestEveryBuiltinResource(t *testing.T) {
	for _, res := range catalogue.Resources() {
		if !res.HasVerb("list") {
			continue
		}
		obj, err := registry.Scheme().New(res.GroupVersionKind())
		if err != nil {
			t.Errorf("Scheme.New(%s): %v", res.GroupVersionKind(), err)
			continue
		}
		tbl := Table(res, []runtime.Object{obj}, now, Options{})
		// Upstream's IPAddress rows carry an Age cell without a column.
		wantCells := len(tbl.ColumnDefinitions)
		if res.Resource == "ipaddresses" {
			wantCells++
		}
		if len(tbl.Rows[0].Cells) != wantCells {
			t.Errorf("Table(%s): %d cells for %d columns", res.GroupResource(), len(tbl.Rows[0].Cells), len(tbl.ColumnDefinitions))
		}
		names := 0
		for _, c := range tbl.ColumnDefinitions {
			if c.Format == "name" {
				names++
			}
			if !strings.Contains(" string integer number boolean date ", " "+c.Type+" ") || c.Priority < 0 || c.Priority > 1 {
				t.Errorf("Table(%s) column %+v is malformed", res.GroupResource(), c)
			}
		}
		// Upstream marks a VolumeAttachment's Attacher column as a name too,
		// and a StorageVersionMigration's Name column not as one.
		want := 1
		switch res.Resource {
		case "volumeattachments":
			want = 2
		case "storageversionmigrations":
			want = 0
		}
		if names != want {
			t.Errorf("Table(%s) has %d name columns, want %d", res.GroupResource(), names, want)
		}
	}
}
