package controllers

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// NewCache is a watch cache of the stored objects of gvr, decoded as T,
// with its key prefix (what Follow feeds it from); an error when the
// catalogue does not serve gvr.
func NewCache[T any](cat *registry.Catalogue, gvr schema.GroupVersionResource, h watchcache.Handlers[T], onError func(key string, err error)) (*watchcache.Cache[T], string, error) {
	res, ok := cat.Lookup(gvr)
	if !ok {
		return nil, "", fmt.Errorf("%s are not served", gvr.Resource)
	}
	prefix := layout.ResourcePrefix(res)
	return watchcache.New(prefix, Decoder[T](res), h, onError), prefix, nil
}

// Decoder decodes the stored objects of res into T, for a watch cache.
func Decoder[T any](res *registry.Resource) func(storage.KeyValue) (T, error) {
	return func(kv storage.KeyValue) (T, error) {
		var zero T
		obj, err := layout.Decode(res, kv)
		if err != nil {
			return zero, err
		}
		t, ok := obj.(T)
		if !ok {
			return zero, fmt.Errorf("%s decoded as %T", kv.Key, obj)
		}
		return t, nil
	}
}
