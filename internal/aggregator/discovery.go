package aggregator

import (
	"cmp"
	"context"
	"math"
	"slices"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/admitd/admitd/internal/registry"
)

// APIGroupList returns the groups of legacy discovery (/apis), as
// kube-aggregator's apis handler: apiregistration.k8s.io first, then the
// APIServices' groups, highest group priority first (ties by APIService
// name), each with its versions by version priority (ties by Kubernetes
// version order), the first preferred. Every APIService counts, available
// or not; a group/version this server serves without an APIService yet
// counts as the Local APIService it will get.
func (a *Aggregator) APIGroupList(ctx context.Context) []metav1.APIGroup {
	out := []metav1.APIGroup{apiregistrationGroup()}
	for _, group := range sortedByGroupAndVersion(a.effectiveAPIServices(ctx)) {
		if g := group[0].Spec.Group; g == "" || g == apiregistrationv1.GroupName {
			continue
		}
		out = append(out, toAPIGroup(group))
	}
	return out
}

// APIGroup returns /apis/<group> from the group's APIServices, as
// kube-aggregator's group handler; nil when the group has none.
func (a *Aggregator) APIGroup(ctx context.Context, group string) *metav1.APIGroup {
	var mine []*apiregistrationv1.APIService
	for _, s := range a.effectiveAPIServices(ctx) {
		if s.Spec.Group == group {
			mine = append(mine, s)
		}
	}
	if len(mine) == 0 || group == "" {
		return nil
	}
	g := toAPIGroup(sortedByGroupAndVersion(mine)[0])
	return &g
}

func apiregistrationGroup() metav1.APIGroup {
	gv := metav1.GroupVersionForDiscovery{GroupVersion: apiregistrationv1.SchemeGroupVersion.String(), Version: "v1"}
	return metav1.APIGroup{Name: apiregistrationv1.GroupName, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}
}

func toAPIGroup(services []*apiregistrationv1.APIService) metav1.APIGroup {
	g := metav1.APIGroup{Name: services[0].Spec.Group}
	for _, s := range services {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: s.Spec.Group + "/" + s.Spec.Version, Version: s.Spec.Version})
	}
	g.PreferredVersion = g.Versions[0]
	return g
}

// effectiveAPIServices are the stored APIServices and, for each
// group/version the catalogue serves without one, the Local APIService
// the registration controller makes for it.
func (a *Aggregator) effectiveAPIServices(ctx context.Context) []*apiregistrationv1.APIService {
	stored := a.apiServices(ctx)
	have := map[string]bool{}
	for _, s := range stored {
		have[s.Name] = true
	}
	if a.o.Catalogue == nil {
		return stored
	}
	for _, res := range a.o.Catalogue.Resources() {
		gv := res.GroupVersion()
		if have[gv.Version+"."+gv.Group] {
			continue
		}
		if p, ok := localPriority(res); ok {
			have[gv.Version+"."+gv.Group] = true
			stored = append(stored, &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: gv.Version + "." + gv.Group},
				Spec: apiregistrationv1.APIServiceSpec{Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: p.Group, VersionPriority: p.Version}})
		}
	}
	return stored
}

// localPriority is the priority of a served resource's group/version.
func localPriority(res *registry.Resource) (registry.APIServicePriority, bool) {
	if res.Unstructured {
		return registry.CustomAPIServicePriority, true
	}
	return registry.BuiltinAPIServicePriority(res.GroupVersion())
}

// sortedByGroupAndVersion is upstream's SortedByGroupAndVersion: the
// APIServices by group priority (highest first, then by name), grouped
// by group in that order, each group's by version priority (highest
// first, then by Kubernetes version order).
func sortedByGroupAndVersion(services []*apiregistrationv1.APIService) [][]*apiregistrationv1.APIService {
	services = slices.Clone(services)
	slices.SortStableFunc(services, func(x, y *apiregistrationv1.APIService) int {
		if c := cmp.Compare(y.Spec.GroupPriorityMinimum, x.Spec.GroupPriorityMinimum); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
	var out [][]*apiregistrationv1.APIService
	index := map[string]int{}
	for _, s := range services {
		i, ok := index[s.Spec.Group]
		if !ok {
			i, index[s.Spec.Group] = len(out), len(out)
			out = append(out, nil)
		}
		out[i] = append(out[i], s)
	}
	for _, group := range out {
		slices.SortStableFunc(group, func(x, y *apiregistrationv1.APIService) int {
			if c := cmp.Compare(y.Spec.VersionPriority, x.Spec.VersionPriority); c != 0 {
				return c
			}
			return -version.CompareKubeAwareVersionStrings(x.Spec.Version, y.Spec.Version)
		})
	}
	return out
}

// MergeDiscovery adds to list (the aggregated discovery of this server's
// own groups, /apis) the group/versions of the APIServices that name a
// service, as kube-aggregator's discovery manager: each as its extension
// server's aggregated discovery says (Current), or without resources and
// Stale when it cannot be fetched (an APIService not Available among
// them). Groups are then ordered by their highest group priority (ties by
// name, apiregistration.k8s.io first) and a remote group's versions by
// version priority, as upstream's merged document.
func (a *Aggregator) MergeDiscovery(ctx context.Context, list *apidiscoveryv2.APIGroupDiscoveryList) {
	var remote []*apiregistrationv1.APIService
	priority := map[schema.GroupVersion]registry.APIServicePriority{}
	for _, s := range a.apiServices(ctx) {
		gv := schema.GroupVersion{Group: s.Spec.Group, Version: s.Spec.Version}
		priority[gv] = registry.APIServicePriority{Group: s.Spec.GroupPriorityMinimum, Version: s.Spec.VersionPriority}
		if s.Spec.Service != nil && s.Spec.Group != "" {
			remote = append(remote, s)
		}
	}
	if len(remote) == 0 {
		return
	}
	prio := func(gv schema.GroupVersion) registry.APIServicePriority {
		if p, ok := priority[gv]; ok {
			return p
		}
		if p, ok := registry.BuiltinAPIServicePriority(gv); ok {
			return p
		}
		return registry.CustomAPIServicePriority
	}
	for i, v := range a.discovery.versions(ctx, remote) {
		addVersion(list, remote[i].Spec.Group, v, prio)
	}
	groupPriority := func(g *apidiscoveryv2.APIGroupDiscovery) int32 {
		if g.Name == apiregistrationv1.GroupName {
			return math.MaxInt32
		}
		best := int32(0)
		for _, v := range g.Versions {
			best = max(best, prio(schema.GroupVersion{Group: g.Name, Version: v.Version}).Group)
		}
		return best
	}
	slices.SortStableFunc(list.Items, func(x, y apidiscoveryv2.APIGroupDiscovery) int {
		if c := cmp.Compare(groupPriority(&y), groupPriority(&x)); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
}

// addVersion puts v into group's entry of list (a new group at the end),
// replacing a version of the same name, and orders the group's versions
// by version priority, then Kubernetes version order.
func addVersion(list *apidiscoveryv2.APIGroupDiscoveryList, group string, v apidiscoveryv2.APIVersionDiscovery,
	prio func(schema.GroupVersion) registry.APIServicePriority) {
	i := slices.IndexFunc(list.Items, func(g apidiscoveryv2.APIGroupDiscovery) bool { return g.Name == group })
	if i < 0 {
		list.Items = append(list.Items, apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: group}})
		i = len(list.Items) - 1
	}
	g := &list.Items[i]
	if j := slices.IndexFunc(g.Versions, func(x apidiscoveryv2.APIVersionDiscovery) bool { return x.Version == v.Version }); j >= 0 {
		g.Versions[j] = v
	} else {
		g.Versions = append(g.Versions, v)
	}
	slices.SortStableFunc(g.Versions, func(x, y apidiscoveryv2.APIVersionDiscovery) int {
		px, py := prio(schema.GroupVersion{Group: group, Version: x.Version}), prio(schema.GroupVersion{Group: group, Version: y.Version})
		if c := cmp.Compare(py.Version, px.Version); c != 0 {
			return c
		}
		return -version.CompareKubeAwareVersionStrings(x.Version, y.Version)
	})
}
