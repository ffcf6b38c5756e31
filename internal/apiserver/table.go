package apiserver

import (
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/admitd/admitd/internal/registry"
)

// wantsTable reports whether the client asked for meta.k8s.io Table output.
func wantsTable(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "as=Table") && strings.Contains(accept, "g=meta.k8s.io")
}

// tableIncludeObject reports whether rows carry the whole object
// (includeObject=Object) rather than its metadata only.
func tableIncludeObject(r *http.Request) bool {
	return r.URL.Query().Get("includeObject") == "Object"
}

// tableFor renders objects as a Table with the generic columns (name, age).
// Rows carry the object's metadata (or the whole object) so that kubectl's
// -A, --show-labels and -L work.
func (s *Server) tableFor(res *registry.Resource, objs []runtime.Object, _ string, fullObject bool) *metav1.Table {
	t := &metav1.Table{
		TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"},
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Rows: []metav1.TableRow{},
	}
	now := s.cfg.Now()
	for _, obj := range objs {
		m := accessor(obj)
		age := "<unknown>"
		if ts := m.GetCreationTimestamp(); !ts.IsZero() {
			age = duration.HumanDuration(now.Sub(ts.Time))
		}
		row := metav1.TableRow{Cells: []any{m.GetName(), age}}
		if fullObject {
			row.Object = runtime.RawExtension{Object: obj}
		} else {
			row.Object = runtime.RawExtension{Object: partialMetadata(obj)}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func partialMetadata(obj runtime.Object) *metav1.PartialObjectMetadata {
	m := accessor(obj)
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(),
			CreationTimestamp: m.GetCreationTimestamp(), DeletionTimestamp: m.GetDeletionTimestamp(),
			Labels: m.GetLabels(), Annotations: m.GetAnnotations(), OwnerReferences: m.GetOwnerReferences(),
			Finalizers: m.GetFinalizers(), Generation: m.GetGeneration(),
		},
	}
}
