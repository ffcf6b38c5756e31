package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/transport"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// remoteRefresh is how long a fetched discovery document is used before it
// is fetched again (upstream's discoveryRefreshInterval); any change of the
// APIService (its availability included) fetches it at once. A fetch that
// failed is tried again after remoteRetry.
const (
	remoteRefresh = time.Minute
	remoteRetry   = 5 * time.Second
)

// acceptAggregated asks an extension server for its aggregated discovery.
const acceptAggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// remoteDiscovery keeps each remote APIService's version of discovery.
type remoteDiscovery struct {
	a  *Aggregator
	mu sync.Mutex
	// entries by APIService name.
	entries map[string]remoteEntry
}

type remoteEntry struct {
	resourceVersion string
	fetched         time.Time
	version         apidiscoveryv2.APIVersionDiscovery
}

// current reports whether an entry fetched for resourceVersion may still
// be used at now.
func current(fetchedFor, resourceVersion string, fetched, now time.Time, failed bool) bool {
	ttl := remoteRefresh
	if failed {
		ttl = remoteRetry
	}
	return fetchedFor == resourceVersion && now.Sub(fetched) < ttl
}

func newRemoteDiscovery(a *Aggregator) *remoteDiscovery {
	return &remoteDiscovery{a: a, entries: map[string]remoteEntry{}}
}

// versions returns the discovery of each APIService's group/version,
// fetching the ones not fetched since they last changed or for
// remoteRefresh, in parallel.
func (d *remoteDiscovery) versions(ctx context.Context, services []*apiregistrationv1.APIService) []apidiscoveryv2.APIVersionDiscovery {
	out := make([]apidiscoveryv2.APIVersionDiscovery, len(services))
	var wg sync.WaitGroup
	now := time.Now()
	for i, s := range services {
		d.mu.Lock()
		e, ok := d.entries[s.Name]
		d.mu.Unlock()
		if ok && current(e.resourceVersion, s.ResourceVersion, e.fetched, now, e.version.Freshness == apidiscoveryv2.DiscoveryFreshnessStale) {
			out[i] = e.version
			continue
		}
		wg.Go(func() {
			v := d.fetch(ctx, s)
			d.mu.Lock()
			d.entries[s.Name] = remoteEntry{resourceVersion: s.ResourceVersion, fetched: now, version: v}
			d.mu.Unlock()
			out[i] = v
		})
	}
	wg.Wait()
	return out
}

// fetch reads the APIService's group/version from its server: the
// aggregated discovery of /apis, else the legacy /apis/<group>/<version>;
// Stale without resources when neither answers.
func (d *remoteDiscovery) fetch(ctx context.Context, s *apiregistrationv1.APIService) apidiscoveryv2.APIVersionDiscovery {
	stale := apidiscoveryv2.APIVersionDiscovery{Version: s.Spec.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessStale}
	if !isAvailable(s) {
		return stale
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	body, contentType, err := d.get(ctx, s, "/apis", acceptAggregated)
	if err == nil && strings.Contains(contentType, "as=APIGroupDiscoveryList") {
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(body, &list); err != nil {
			return stale
		}
		for _, g := range list.Items {
			for _, v := range g.Versions {
				if g.Name == s.Spec.Group && v.Version == s.Spec.Version {
					v.Freshness = apidiscoveryv2.DiscoveryFreshnessCurrent
					return v
				}
			}
		}
		return apidiscoveryv2.APIVersionDiscovery{Version: s.Spec.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	}
	body, _, err = d.get(ctx, s, "/apis/"+s.Spec.Group+"/"+s.Spec.Version, "application/json")
	if err != nil {
		d.a.o.Log.Debug("fetching the discovery of an APIService", "apiservice", s.Name, "err", err)
		return stale
	}
	var legacy metav1.APIResourceList
	if err := json.Unmarshal(body, &legacy); err != nil {
		return stale
	}
	return apidiscoveryv2.APIVersionDiscovery{Version: s.Spec.Version, Resources: fromLegacy(legacy.APIResources),
		Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
}

// get sends a discovery GET to the APIService's server as the aggregator
// (system:kube-aggregator in system:masters).
func (d *remoteDiscovery) get(ctx context.Context, s *apiregistrationv1.APIService, path, accept string) ([]byte, string, error) {
	rt, err := d.a.transport(s)
	if err != nil {
		return nil, "", err
	}
	host, err := d.a.resolve(ctx, s.Spec.Service)
	if err != nil {
		return nil, "", err
	}
	u := &url.URL{Scheme: "https", Host: host, Path: path}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", accept)
	transport.SetAuthProxyHeaders(req, "system:kube-aggregator", "", []string{"system:masters"}, nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("GET %s: %d", u, resp.StatusCode)
	}
	return body, resp.Header.Get("Content-Type"), nil
}

// fromLegacy converts a legacy resource list into aggregated discovery
// resources, as upstream's ConvertGroupVersionIntoToDiscovery:
// subresources ("pods/status") join their resource.
func fromLegacy(list []metav1.APIResource) []apidiscoveryv2.APIResourceDiscovery {
	var out []apidiscoveryv2.APIResourceDiscovery
	index := map[string]int{}
	for _, r := range list {
		if strings.Contains(r.Name, "/") {
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		index[r.Name] = len(out)
		out = append(out, apidiscoveryv2.APIResourceDiscovery{Resource: r.Name, Scope: scope, SingularResource: r.SingularName,
			ResponseKind: &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
			Verbs:        r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories})
	}
	for _, r := range list {
		parent, sub, ok := strings.Cut(r.Name, "/")
		i, found := index[parent]
		if !ok || !found {
			continue
		}
		out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{Subresource: sub,
			ResponseKind: &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}, Verbs: r.Verbs})
	}
	return out
}
