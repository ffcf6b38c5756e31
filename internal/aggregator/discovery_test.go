package aggregator

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/admitd/admitd/internal/registry"
)

func names(groups []metav1.APIGroup) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g.Name)
	}
	return out
}

// TestAPIGroupList: legacy discovery lists apiregistration.k8s.io first,
// then every APIService's group by priority: the served groups (as their
// Local APIServices, stored or not), a remote group at 1000, a stored
// Local one at 100 that nothing serves, each group's versions by version
// priority.
func TestAPIGroupList(t *testing.T) {
	st := newStored()
	for name, p := range map[string][2]int32{"v1alpha1.wardle.example.com": {1000, 15}, "v1beta1.wardle.example.com": {1000, 10}, "v1.gone.example.com": {100, 1}} {
		st.apiServices[name] = &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: name}}
		gv := splitName(name)
		st.apiServices[name].Spec = apiregistrationv1.APIServiceSpec{Group: gv[1], Version: gv[0], GroupPriorityMinimum: p[0], VersionPriority: p[1]}
	}
	st.apiServices["v1.apps"] = &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.apps"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "apps", Version: "v1", GroupPriorityMinimum: 17800, VersionPriority: 15}}
	cat := registry.NewCatalogue()
	a := New(Options{APIServices: st, Services: st, Catalogue: cat})
	got := names(a.APIGroupList(context.Background()))
	// kube-apiserver 1.37.2's order, less the groups admitd does not serve.
	want := slices.DeleteFunc([]string{"apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch",
		"certificates.k8s.io", "networking.k8s.io", "policy", "rbac.authorization.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io",
		"apiextensions.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "resource.k8s.io",
		"flowcontrol.apiserver.k8s.io", "storagemigration.k8s.io", "wardle.example.com", "gone.example.com"}, func(g string) bool {
		return len(cat.Versions(g)) == 0 && g != "wardle.example.com" && g != "gone.example.com"
	})
	if !slices.Equal(got, want) {
		t.Errorf("APIGroupList =\n%q\nwant\n%q", got, want)
	}
	w := a.APIGroup(context.Background(), "wardle.example.com")
	if w == nil || len(w.Versions) != 2 || w.Versions[0].Version != "v1alpha1" || w.PreferredVersion.Version != "v1alpha1" {
		t.Errorf("APIGroup(wardle) = %+v, want v1alpha1 (priority 15) before v1beta1 (10), preferred", w)
	}
	if a.APIGroup(context.Background(), "nothing.example.com") != nil {
		t.Error("APIGroup of a group without APIServices is not nil")
	}
}

func splitName(name string) [2]string {
	for i := range name {
		if name[i] == '.' {
			return [2]string{name[:i], name[i+1:]}
		}
	}
	return [2]string{name, ""}
}

// TestMergeDiscovery: an available remote APIService adds its version of
// its server's aggregated discovery, Current, after the served groups (by
// priority); an unavailable one its version without resources, Stale.
func TestMergeDiscovery(t *testing.T) {
	proxyCA, cert := newProxyIdentity(t)
	remote := apidiscoveryv2.APIGroupDiscoveryList{Items: []apidiscoveryv2.APIGroupDiscovery{{ObjectMeta: metav1.ObjectMeta{Name: "wardle.example.com"},
		Versions: []apidiscoveryv2.APIVersionDiscovery{
			{Version: "v1beta1", Resources: []apidiscoveryv2.APIResourceDiscovery{{Resource: "flunders"}}},
			{Version: "v1alpha1", Resources: []apidiscoveryv2.APIResourceDiscovery{{Resource: "flunders", Scope: apidiscoveryv2.ScopeNamespace}, {Resource: "fischers"}}}}}}}
	b := newBackend(t, proxyCA, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		_ = json.NewEncoder(w).Encode(remote)
	})
	st := newStored()
	s := wardle(t, st, b, true)
	a := New(Options{APIServices: st, Services: st, ProxyClientCert: cert, Catalogue: registry.NewCatalogue()})
	local := func() *apidiscoveryv2.APIGroupDiscoveryList {
		return &apidiscoveryv2.APIGroupDiscoveryList{Items: []apidiscoveryv2.APIGroupDiscovery{
			{ObjectMeta: metav1.ObjectMeta{Name: "zeta.example.com"}, Versions: []apidiscoveryv2.APIVersionDiscovery{{Version: "v1"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "apps"}, Versions: []apidiscoveryv2.APIVersionDiscovery{{Version: "v1"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "apiregistration.k8s.io"}, Versions: []apidiscoveryv2.APIVersionDiscovery{{Version: "v1"}}}}}
	}
	list := local()
	a.MergeDiscovery(context.Background(), list)
	var order []string
	for _, g := range list.Items {
		order = append(order, g.Name)
	}
	if want := []string{"apiregistration.k8s.io", "apps", "wardle.example.com", "zeta.example.com"}; !slices.Equal(order, want) {
		t.Errorf("merged groups = %q, want %q", order, want)
	}
	v := list.Items[2].Versions
	if len(v) != 1 || v[0].Version != "v1alpha1" || v[0].Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent || len(v[0].Resources) != 2 {
		t.Errorf("wardle versions = %+v, want v1alpha1 only, Current, with its two resources", v)
	}
	st.update(func() { s.Status.Conditions[0].Status, s.ResourceVersion = apiregistrationv1.ConditionFalse, "2" })
	list = local()
	a.MergeDiscovery(context.Background(), list)
	if v := list.Items[2].Versions; len(v) != 1 || v[0].Freshness != apidiscoveryv2.DiscoveryFreshnessStale || v[0].Resources != nil {
		t.Errorf("unavailable wardle versions = %+v, want v1alpha1 Stale without resources", v)
	}
}
