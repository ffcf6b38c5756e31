package apiserver

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/printers"
	"github.com/admitd/admitd/internal/registry"
)

// tableIncludeObject reports whether rows carry the whole object
// (includeObject=Object) rather than its metadata only.
func tableIncludeObject(r *http.Request) bool {
	return r.URL.Query().Get("includeObject") == "Object"
}

// tableFor renders objects as a Table with the kind's kubectl get columns.
// Rows carry the object's metadata (or the whole object) so that kubectl's
// -A, --show-labels and -L work.
// tableBuilder starts a table of res's kind a row at a time, as tableFor.
func (s *Server) tableBuilder(res *registry.Resource, fullObject bool) *printers.TableBuilder {
	opts := printers.Options{IncludeObject: metav1.IncludeMetadata}
	if fullObject {
		opts.IncludeObject = metav1.IncludeObject
	}
	return printers.NewTableBuilder(res, s.cfg.Now(), opts)
}

func (s *Server) tableFor(res *registry.Resource, objs []runtime.Object, _ string, fullObject bool) *metav1.Table {
	opts := printers.Options{IncludeObject: metav1.IncludeMetadata}
	if fullObject {
		opts.IncludeObject = metav1.IncludeObject
	}
	return printers.Table(res, objs, s.cfg.Now(), opts)
}

// asTableVersion makes t a Table of the meta.k8s.io version n asks for:
// in a v1beta1 Table, the metadata each row carries is of v1beta1 too, as
// upstream converts the whole table.
func asTableVersion(t *metav1.Table, n negotiated) {
	t.APIVersion = n.metaAPIVersion()
	if n.version != "v1beta1" {
		return
	}
	for i := range t.Rows {
		asRowVersion(&t.Rows[i], n)
	}
}

// asRowVersion makes the metadata a row carries of the meta.k8s.io
// version n asks for.
func asRowVersion(row *metav1.TableRow, n negotiated) {
	if p, ok := row.Object.Object.(*metav1.PartialObjectMetadata); ok && n.version == "v1beta1" {
		p.APIVersion = n.metaAPIVersion()
	}
}
