package admissionsource

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/restmapper"

	"github.com/admitd/admitd/pkg/admission/plugins/ownerreferencespermissionenforcement"
)

// OwnerReferencesPermissionEnforcement finds the mapper on the schema.
var _ ownerreferencespermissionenforcement.RESTMapper = (*Schema)(nil)

// RESTMappings maps a kind to the resources that serve it, as
// kube-apiserver's admission REST mapper does over its own discovery
// (client-go's discovery REST mapper: preferred versions first, every
// version when none is named, upstream's NoKindMatch errors). It reads the
// catalogue as it is now, custom resources included.
func (s *Schema) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return restmapper.NewDiscoveryRESTMapper(s.groupResources()).RESTMappings(gk, versions...)
}

// groupResources is the catalogue as discovery publishes it.
func (s *Schema) groupResources() []*restmapper.APIGroupResources {
	byGV := map[schema.GroupVersion][]metav1.APIResource{}
	for _, res := range s.cat.Resources() {
		gv := res.GroupVersion()
		byGV[gv] = append(byGV[gv], metav1.APIResource{Name: res.Resource, SingularName: res.Singular,
			Namespaced: res.Namespaced, Kind: res.Kind, Verbs: res.Verbs, ShortNames: res.ShortNames})
	}
	var out []*restmapper.APIGroupResources
	for _, group := range s.cat.Groups() {
		g := &restmapper.APIGroupResources{Group: metav1.APIGroup{Name: group}, VersionedResources: map[string][]metav1.APIResource{}}
		for i, v := range s.cat.Versions(group) {
			gvd := metav1.GroupVersionForDiscovery{GroupVersion: strings.TrimPrefix(group+"/"+v, "/"), Version: v}
			if i == 0 {
				g.Group.PreferredVersion = gvd
			}
			g.Group.Versions = append(g.Group.Versions, gvd)
			g.VersionedResources[v] = byGV[schema.GroupVersion{Group: group, Version: v}]
		}
		out = append(out, g)
	}
	return out
}
