package layout

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Encode serialises obj in its storage version without its
// resourceVersion, which is the storage revision and is stamped on read.
func Encode(obj runtime.Object) ([]byte, error) {
	stored, err := registry.ToStorageVersion(obj)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(stored)
	if err != nil {
		return nil, err
	}
	rv := m.GetResourceVersion()
	m.SetResourceVersion("")
	defer m.SetResourceVersion(rv)
	return json.Marshal(stored)
}

// Decode decodes a stored value as an object of res, in res's version,
// with resourceVersion set from the revision. A custom resource stored in
// another version is converted by its definition's converter.
func Decode(res *registry.Resource, kv storage.KeyValue) (runtime.Object, error) {
	return DecodeContext(context.Background(), res, kv)
}

// DecodeContext is Decode with the context of a conversion webhook call.
func DecodeContext(ctx context.Context, res *registry.Resource, kv storage.KeyValue) (runtime.Object, error) {
	if res.Unstructured {
		objs, err := DecodeAll(ctx, res, []storage.KeyValue{kv})
		if err != nil {
			return nil, err
		}
		return objs[0], nil
	}
	obj, err := decodeStored(res, kv)
	if err != nil {
		return nil, err
	}
	return obj, stamp(res, obj, kv)
}

// DecodeAll decodes stored values as Decode does; the custom resources
// among them that need conversion are converted in one call.
func DecodeAll(ctx context.Context, res *registry.Resource, kvs []storage.KeyValue) ([]runtime.Object, error) {
	objs := make([]runtime.Object, len(kvs))
	var custom []*unstructured.Unstructured
	for i, kv := range kvs {
		obj, err := decodeStored(res, kv)
		if err != nil {
			return nil, err
		}
		objs[i] = obj
		if u, ok := obj.(*unstructured.Unstructured); ok && res.Unstructured {
			custom = append(custom, u)
		}
	}
	if len(custom) > 0 {
		if err := res.ConvertCustom(ctx, custom); err != nil {
			return nil, err
		}
		n := 0
		for i := range objs {
			if _, ok := objs[i].(*unstructured.Unstructured); ok {
				objs[i] = custom[n]
				n++
			}
		}
	}
	for i, obj := range objs {
		if err := stamp(res, obj, kvs[i]); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// stamp sets a decoded object's apiVersion and kind to res's and its
// resourceVersion to the revision of kv.
func stamp(res *registry.Resource, obj runtime.Object, kv storage.KeyValue) error {
	obj.GetObjectKind().SetGroupVersionKind(res.GroupVersionKind())
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	m.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	return nil
}

// decodeStored decodes a stored value: a built-in object converted to
// res's version, a custom resource in the version it was stored in.
func decodeStored(res *registry.Resource, kv storage.KeyValue) (runtime.Object, error) {
	stored := res
	if sgv := res.StorageGroupVersion(); sgv != res.GroupVersion() && !res.Unstructured {
		stored = &registry.Resource{GroupVersionResource: sgv.WithResource(res.Resource), Kind: res.Kind}
	}
	obj, err := NewObject(stored)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(kv.Value, obj); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", kv.Key, err)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok && u.GetAPIVersion() == "" {
		u.SetGroupVersionKind(res.GroupVersionKind())
	}
	if stored != res {
		if obj, err = registry.ConvertTo(obj, res.GroupVersionKind()); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", kv.Key, err)
		}
	}
	return obj, nil
}

// List reads every stored object of res at revision rev (0: the current
// one), decoded, with their records.
func List(ctx context.Context, store storage.Store, res *registry.Resource, rev int64) ([]storage.KeyValue, []runtime.Object, error) {
	page, err := store.List(ctx, ResourcePrefix(res), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, nil, err
	}
	objs, err := DecodeAll(ctx, res, page.Items)
	if err != nil {
		return nil, nil, err
	}
	return page.Items, objs, nil
}

// NewObject returns an empty object of res's kind.
func NewObject(res *registry.Resource) (runtime.Object, error) {
	if res.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetGroupVersionKind(res.GroupVersionKind())
		return u, nil
	}
	obj, err := registry.Scheme().New(res.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(res.GroupVersionKind())
	return obj, nil
}
