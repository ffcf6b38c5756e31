package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// AutoRegisterCompletion is kube-apiserver's autoregister-completion health
// check: it fails, naming them, until every built-in APIService of the
// catalogue has been seen Available in storage, and passes from then on
// (a boot-sequence check). It reads storage, so it holds on every instance
// sharing it, whichever one registered them.
type AutoRegisterCompletion struct {
	store   storage.Store
	mu      sync.Mutex
	pending sets.Set[string]
}

// NewAutoRegisterCompletion returns the check of cat's built-in
// group/versions.
func NewAutoRegisterCompletion(store storage.Store, cat *registry.Catalogue) *AutoRegisterCompletion {
	pending := sets.New[string]()
	for _, res := range cat.Resources() {
		if _, ok := registry.BuiltinAPIServicePriority(res.GroupVersion()); ok && !res.Unstructured {
			pending.Insert(apiServiceName(res.GroupVersion()))
		}
	}
	return &AutoRegisterCompletion{store: store, pending: pending}
}

// Check passes once every built-in APIService has been seen Available.
func (a *AutoRegisterCompletion) Check(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pending.Len() == 0 {
		return nil
	}
	// Bounded: upstream's reads an informer's cache and never waits on
	// storage, and a health answer must come while storage is down.
	ctx, cancel := context.WithTimeout(ctx, completionReadTimeout)
	defer cancel()
	page, err := a.store.List(ctx, apiServicesPrefix, storage.ListOptions{})
	if err != nil {
		return err
	}
	for _, kv := range page.Items {
		var s apiregistrationv1.APIService
		if json.Unmarshal(kv.Value, &s) == nil && available(&s) {
			a.pending.Delete(s.Name)
		}
	}
	if a.pending.Len() > 0 {
		return fmt.Errorf("missing APIService: %v", sets.List(a.pending))
	}
	return nil
}

// completionReadTimeout bounds the check's read of the APIServices.
const completionReadTimeout = time.Second

func available(s *apiregistrationv1.APIService) bool {
	for _, c := range s.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}
