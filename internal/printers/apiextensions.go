package printers

import (
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CustomResourceDefinition table, as apiextensions-apiserver 1.37's
// table convertor: the scope, the served versions sorted (the storage one
// marked), the creation time as a date (not an age); then, wide, the
// group, kind, short names and whether it is Established.
var crdPrinter = kind([]metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]},
	str("Scope", "Cluster/Namespaced"),
	str("Versions", "Served versions"),
	{Name: "Created At", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
	{Name: "Group", Type: "string", Priority: 1, Description: "API group"},
	{Name: "Kind", Type: "string", Priority: 1, Description: "CustomResource kind"},
	{Name: "ShortNames", Type: "string", Priority: 1, Description: "Short names"},
	{Name: "Established", Type: "boolean", Priority: 1, Description: "Established status"},
}, func(crd *apiextensionsv1.CustomResourceDefinition, _ time.Time) []any {
	return []any{crd.Name, string(crd.Spec.Scope), strings.Join(servedVersions(crd), ","),
		crd.CreationTimestamp.UTC().Format(time.RFC3339), crd.Spec.Group, crd.Spec.Names.Kind,
		strings.Join(crd.Spec.Names.ShortNames, ","), crdEstablished(crd)}
})

// servedVersions are crd's served versions, sorted, "(storage)" after the
// storage version.
func servedVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var versions []string
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		label := v.Name
		if v.Storage {
			label += "(storage)"
		}
		versions = append(versions, label)
	}
	slices.Sort(versions)
	return versions
}

func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
