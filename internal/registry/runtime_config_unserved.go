package registry

import (
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// upstreamOffByDefault are the resources kube-apiserver 1.37.2 serves in
// versions that are off by default, once --runtime-config turns them on
// (its discovery under api/all=true with default feature gates; subresources
// aside).
var upstreamOffByDefault = map[schema.GroupVersion][]string{
	{Group: "admissionregistration.k8s.io", Version: "v1beta1"}:  {"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"},
	{Group: "admissionregistration.k8s.io", Version: "v1alpha1"}: {"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"},
	{Group: "certificates.k8s.io", Version: "v1beta1"}:           {"clustertrustbundles", "podcertificaterequests"},
	{Group: "coordination.k8s.io", Version: "v1beta1"}:           {"leasecandidates"},
	{Group: "coordination.k8s.io", Version: "v1alpha2"}:          {"leasecandidates"},
	{Group: "resource.k8s.io", Version: "v1beta2"}: {"deviceclasses", "devicetaintrules", "resourceclaims",
		"resourceclaimtemplates", "resourceslices"},
	{Group: "resource.k8s.io", Version: "v1beta1"}:            {"deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices"},
	{Group: "resource.k8s.io", Version: "v1alpha3"}:           {"devicetaintrules", "resourcepoolstatusrequests"},
	{Group: "storagemigration.k8s.io", Version: "v1beta1"}:    {"storageversionmigrations"},
	{Group: "internal.apiserver.k8s.io", Version: "v1alpha1"}: {"storageversions"},
}

// Unserved returns the resources e turns on that kube-apiserver would
// serve and cat does not ("group/version/resource", sorted): what admitd
// cannot serve of a --runtime-config, to warn about.
func Unserved(e *APIEnablement, cat *Catalogue) []string {
	var out []string
	for gv, resources := range upstreamOffByDefault {
		for _, r := range resources {
			gvr := gv.WithResource(r)
			if _, ok := cat.Lookup(gvr); e.ResourceEnabled(gvr) && !ok {
				out = append(out, gv.String()+"/"+r)
			}
		}
	}
	sort.Strings(out)
	return out
}
