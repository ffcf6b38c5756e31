package printers

import (
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/registry"
)

// scalePrinter is upstream's printer of a built-in resource's Scale; its
// Name column, unlike the others, has no "name" format.
var scalePrinter = kind([]metav1.TableColumnDefinition{
	str("Name", objectMetaDoc["name"]),
	integer("Desired", autoscalingv1.ScaleSpec{}.SwaggerDoc()["replicas"]),
	integer("Available", autoscalingv1.ScaleStatus{}.SwaggerDoc()["replicas"]),
	ageColumn,
}, func(s *autoscalingv1.Scale, now time.Time) []any {
	return []any{s.Name, int64(s.Spec.Replicas), int64(s.Status.Replicas), since(s.CreationTimestamp, now)}
})

// customScalePrinter lays out a custom resource's Scale as the
// apiextensions server does: its own columns over the Scale object (a
// scale subresource always names both replica paths).
var customScalePrinter = customPrinter([]apiextensionsv1.CustomResourceColumnDefinition{
	{Name: "Desired", Type: "integer", Description: "Number of desired replicas", JSONPath: ".spec.replicas"},
	{Name: "Available", Type: "integer", Description: "Number of actual replicas", JSONPath: ".status.replicas"},
	{Name: "Age", Type: "date", Description: objectMetaDoc["creationTimestamp"], JSONPath: ".metadata.creationTimestamp"},
})

// ScaleTable renders sc, the scale subresource of an object of res, as a
// Table.
func ScaleTable(res *registry.Resource, sc *autoscalingv1.Scale, now time.Time, opts Options) *metav1.Table {
	p := scalePrinter
	if res.Unstructured {
		p = customScalePrinter
	}
	b := newTableBuilder(p, now, opts)
	b.Add(sc)
	return b.Table()
}
