package admissionsource

import (
	"context"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/admission/policyschema"
	"github.com/admitd/admitd/pkg/storage"
)

// CRDTypeConverters gives MutatingAdmissionPolicy the structured-merge
// schema of custom resources (see policyschema.NewCRDTypeConverter), built once
// per definition revision.
type CRDTypeConverters struct {
	store storage.Store
	cat   *registry.Catalogue

	mu    sync.Mutex
	cache map[schema.GroupVersionKind]crdConverter
}

type crdConverter struct {
	rv string
	tc managedfields.TypeConverter
}

var _ policies.TypeConverterSource = (*CRDTypeConverters)(nil)

// NewCRDTypeConverters returns converters over the definitions in store.
func NewCRDTypeConverters(store storage.Store, cat *registry.Catalogue) *CRDTypeConverters {
	return &CRDTypeConverters{store: store, cat: cat, cache: map[schema.GroupVersionKind]crdConverter{}}
}

// TypeConverter returns the converter of a served custom resource kind, or
// nil.
func (c *CRDTypeConverters) TypeConverter(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	crd := CRDFor(c.store, c.cat, gvk)
	if crd == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.cache[gvk]; ok && e.rv == crd.ResourceVersion {
		return e.tc
	}
	tc, err := policyschema.NewCRDTypeConverter(crd, gvk.Version)
	if err != nil {
		return nil
	}
	c.cache[gvk] = crdConverter{rv: crd.ResourceVersion, tc: tc}
	return tc
}

// crdFor reads the definition that serves gvk, or nil.
func CRDFor(store storage.Store, cat *registry.Catalogue, gvk schema.GroupVersionKind) *apiextensionsv1.CustomResourceDefinition {
	res, ok := cat.LookupKind(gvk)
	if !ok || !res.Unstructured {
		return nil
	}
	crdRes, ok := cat.Lookup(registry.CRDResource)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	kv, err := store.Get(ctx, layout.Key(crdRes, "", res.Resource+"."+res.Group))
	if err != nil {
		return nil
	}
	obj, err := layout.Decode(crdRes, kv)
	if err != nil {
		return nil
	}
	crd, _ := obj.(*apiextensionsv1.CustomResourceDefinition)
	return crd
}
