package apiserver

import (
	"fmt"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/printers"
	"github.com/admitd/admitd/internal/registry"
)

// writeScale answers with sc, the Scale of an object of res, or what the
// Accept header asks it to be turned into, as upstream's scale storages
// do: a Table of their scale columns, its metadata, a 406 for a list's.
func (s *Server) writeScale(w http.ResponseWriter, r *http.Request, res *registry.Resource, sc *autoscalingv1.Scale) {
	n, err := negotiateOutput(r, res)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var out any = sc
	switch n.as {
	case asTable:
		opts := printers.Options{IncludeObject: metav1.IncludeMetadata}
		if tableIncludeObject(r) {
			opts.IncludeObject = metav1.IncludeObject
		}
		t := printers.ScaleTable(res, sc, s.cfg.Now(), opts)
		asTableVersion(t, n)
		t.ResourceVersion = sc.ResourceVersion
		out = t
	case asPartial:
		out = partialOf(sc, n.version)
	case asPartialList:
		writeError(w, r, errNotAcceptable(fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (*%s)", scaleTypeName(res))))
		return
	}
	writeNegotiated(w, r, http.StatusOK, n, out)
}

// scaleTypeName is the Go type upstream's 406 names for a Scale: the
// internal autoscaling type of a built-in resource's, the v1 type a custom
// resource's scale storage serves.
func scaleTypeName(res *registry.Resource) string {
	if res.Unstructured {
		return "v1.Scale"
	}
	return "autoscaling.Scale"
}
