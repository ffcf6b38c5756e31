package apiserver

import (
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

const aggregatedDiscoveryType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

func wantsAggregated(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		p := strings.ReplaceAll(part, " ", "")
		if strings.Contains(p, "as=APIGroupDiscoveryList") && strings.Contains(p, ";v=v2;") {
			return true
		}
	}
	return false
}

// serveDiscoveryRoot answers /api and /apis, aggregated when asked.
func (s *Server) serveDiscoveryRoot(w http.ResponseWriter, r *http.Request, path string) {
	core := path == "/api"
	if wantsAggregated(r) {
		list := s.aggregatedDiscovery(core)
		if !core && s.cfg.Aggregator != nil {
			s.cfg.Aggregator.MergeDiscovery(r.Context(), list)
		}
		setWarnings(w, requestFrom(r.Context()))
		writeJSONAs(w, http.StatusOK, aggregatedDiscoveryType, list)
		return
	}
	if core {
		writeObject(w, r, http.StatusOK, &metav1.APIVersions{
			TypeMeta:                   metav1.TypeMeta{Kind: "APIVersions"},
			Versions:                   []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}},
		})
		return
	}
	groups := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	if s.cfg.Aggregator != nil {
		groups.Groups = s.cfg.Aggregator.APIGroupList(r.Context())
		writeObject(w, r, http.StatusOK, groups)
		return
	}
	for _, g := range s.cat.Groups() {
		if g == "" {
			continue
		}
		groups.Groups = append(groups.Groups, s.apiGroup(g))
	}
	writeObject(w, r, http.StatusOK, groups)
}

func (s *Server) apiGroup(g string) metav1.APIGroup {
	grp := metav1.APIGroup{Name: g}
	for _, v := range s.cat.Versions(g) {
		grp.Versions = append(grp.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g + "/" + v, Version: v})
	}
	if len(grp.Versions) > 0 {
		grp.PreferredVersion = grp.Versions[0]
	}
	return grp
}

func (s *Server) aggregatedDiscovery(core bool) *apidiscoveryv2.APIGroupDiscoveryList {
	list := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"}}
	for _, g := range s.cat.Groups() {
		if (g == "") != core {
			continue
		}
		gd := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g}}
		for _, v := range s.cat.Versions(g) {
			vd := apidiscoveryv2.APIVersionDiscovery{Version: v, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
			for _, res := range s.cat.Resources() {
				if res.Group == g && res.Version == v {
					vd.Resources = append(vd.Resources, resourceDiscovery(res))
				}
			}
			gd.Versions = append(gd.Versions, vd)
		}
		list.Items = append(list.Items, gd)
	}
	return list
}

// responseKind is a resource's or subresource's kind as upstream's
// aggregated discovery names it: a built-in kind of the served group
// version without its group and version (as the legacy document's
// resource), a custom resource's with them.
func responseKind(res *registry.Resource, kind schema.GroupVersionKind) *metav1.GroupVersionKind {
	if !res.Unstructured && kind.GroupVersion() == res.GroupVersion() {
		return &metav1.GroupVersionKind{Kind: kind.Kind}
	}
	return &metav1.GroupVersionKind{Group: kind.Group, Version: kind.Version, Kind: kind.Kind}
}

func resourceDiscovery(res *registry.Resource) apidiscoveryv2.APIResourceDiscovery {
	scope := apidiscoveryv2.ScopeCluster
	if res.Namespaced {
		scope = apidiscoveryv2.ScopeNamespace
	}
	d := apidiscoveryv2.APIResourceDiscovery{
		Resource: res.Resource, ResponseKind: responseKind(res, res.GroupVersionKind()),
		Scope: scope, SingularResource: res.Singular, Verbs: res.Verbs, ShortNames: res.ShortNames, Categories: res.Categories,
	}
	for _, sub := range res.Subresources {
		d.Subresources = append(d.Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource:  sub.Name,
			ResponseKind: responseKind(res, sub.Kind),
			Verbs:        sub.Verbs,
		})
	}
	return d
}

// serveAPIGroup answers /apis/<group> with the group's APIGroup: its
// served versions and the preferred one (its APIServices' when there is
// an aggregator).
func (s *Server) serveAPIGroup(w http.ResponseWriter, r *http.Request, group string) {
	if s.cfg.Aggregator != nil {
		if grp := s.cfg.Aggregator.APIGroup(r.Context(), group); grp != nil {
			grp.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
			writeObject(w, r, http.StatusOK, grp)
			return
		}
	}
	if s.unservedGroup("apis", group) {
		writeNotFoundPage(w, r)
		return
	}
	grp := s.apiGroup(group)
	grp.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
	writeObject(w, r, http.StatusOK, &grp)
}

// serveGroupVersion answers legacy per-group-version discovery
// (/api/v1, /apis/<group>/<version>).
func (s *Server) serveGroupVersion(w http.ResponseWriter, r *http.Request, info *requestInfo) {
	if info.Version == "" || (info.APIPrefix == "apis" && info.Group == "") {
		writeError(w, r, errNotFoundPath())
		return
	}
	gv := info.Version
	if info.Group != "" {
		gv = info.Group + "/" + info.Version
	}
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv}
	if info.APIPrefix == "api" {
		list.APIVersion = "" // upstream's /api/v1 document names no apiVersion
	}
	found := false
	for _, res := range s.cat.Resources() {
		if res.Group != info.Group || res.Version != info.Version {
			continue
		}
		found = true
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: res.Resource, SingularName: res.Singular, Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs: res.Verbs, ShortNames: res.ShortNames, Categories: res.Categories,
			StorageVersionHash: storageVersionHash(res),
		})
		for _, sub := range res.Subresources {
			ar := metav1.APIResource{Name: res.Resource + "/" + sub.Name, Namespaced: res.Namespaced, Kind: sub.Kind.Kind, Verbs: sub.Verbs}
			if sub.Kind.GroupVersion() != res.GroupVersion() {
				ar.Group, ar.Version = sub.Kind.Group, sub.Kind.Version
			}
			list.APIResources = append(list.APIResources, ar)
		}
	}
	switch {
	case !found && info.APIPrefix == "apis" && !s.builtinGroup(info.Group):
		writeNotFoundPage(w, r) // apiextensions-apiserver's delegate
	case !found:
		writeError(w, r, errNotFoundPath())
	case r.Method != http.MethodGet:
		writeError(w, r, errMethodNotAllowed())
	default:
		writeObject(w, r, http.StatusOK, list)
	}
}
