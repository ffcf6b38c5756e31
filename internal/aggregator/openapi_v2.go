package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	kubeaggregator "k8s.io/kube-openapi/pkg/aggregator"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// remoteOpenAPIV2 keeps each remote APIService's server's /openapi/v2,
// filtered to the APIService's group/version, as kube-aggregator's OpenAPI
// v2 aggregator downloads it.
type remoteOpenAPIV2 struct {
	mu      sync.Mutex
	entries map[string]openAPIV2Entry // by APIService name
}

type openAPIV2Entry struct {
	resourceVersion string
	fetched         time.Time
	spec            *spec.Swagger // nil when the fetch failed
}

// OpenAPIV2Specs returns the /openapi/v2 documents of the available remote
// APIServices' servers, each filtered to the paths of its group/version,
// in the order kube-aggregator merges them after the local document, and a
// key that changes whenever one of them does. Each is fetched again when
// its APIService changes, after remoteRefresh, or after remoteRetry when
// the last fetch failed; a server that does not answer contributes nothing.
func (a *Aggregator) OpenAPIV2Specs(ctx context.Context) ([]*spec.Swagger, string) {
	services := a.availableRemote(ctx)
	sortForMerge(services)
	var specs []*spec.Swagger
	var key strings.Builder
	for _, s := range services {
		e := a.openAPIV2(ctx, s)
		if e.spec == nil {
			continue
		}
		specs = append(specs, e.spec)
		fmt.Fprintf(&key, "%s@%s@%d;", s.Name, e.resourceVersion, e.fetched.UnixNano())
	}
	return specs, key.String()
}

// sortForMerge orders remote APIServices as kube-aggregator's OpenAPI v2
// aggregator: by their group's highest groupPriorityMinimum, higher first,
// then by name (within a group by name only: upstream compares one
// service's version priority with itself).
func sortForMerge(services []*apiregistrationv1.APIService) {
	groupPriority := map[string]int32{}
	for _, s := range services {
		if p, ok := groupPriority[s.Spec.Group]; !ok || s.Spec.GroupPriorityMinimum > p {
			groupPriority[s.Spec.Group] = s.Spec.GroupPriorityMinimum
		}
	}
	slices.SortStableFunc(services, func(x, y *apiregistrationv1.APIService) int {
		if x.Spec.Group != y.Spec.Group {
			if px, py := groupPriority[x.Spec.Group], groupPriority[y.Spec.Group]; px != py {
				return int(py) - int(px)
			}
		}
		return strings.Compare(x.Name, y.Name)
	})
}

// openAPIV2 returns s's server's filtered document, fetching it when it is
// not current.
func (a *Aggregator) openAPIV2(ctx context.Context, s *apiregistrationv1.APIService) openAPIV2Entry {
	o := &a.openAPIV2Docs
	o.mu.Lock()
	e, ok := o.entries[s.Name]
	o.mu.Unlock()
	now := time.Now()
	if ok && current(e.resourceVersion, s.ResourceVersion, e.fetched, now, e.spec == nil) {
		return e
	}
	e = openAPIV2Entry{resourceVersion: s.ResourceVersion, fetched: now}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	body, _, err := a.discovery.get(ctx, s, "/openapi/v2", "application/json")
	var doc spec.Swagger
	if err == nil {
		err = json.Unmarshal(body, &doc)
	}
	if err != nil {
		a.o.Log.Debug("fetching the OpenAPI v2 document of an APIService", "apiservice", s.Name, "err", err)
	} else {
		e.spec = kubeaggregator.FilterSpecByPathsWithoutSideEffects(&doc, []string{"/apis/" + s.Spec.Group + "/" + s.Spec.Version + "/"})
	}
	o.mu.Lock()
	if o.entries == nil {
		o.entries = map[string]openAPIV2Entry{}
	}
	o.entries[s.Name] = e
	o.mu.Unlock()
	return e
}
