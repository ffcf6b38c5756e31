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
// with resourceVersion set from the revision.
func Decode(res *registry.Resource, kv storage.KeyValue) (runtime.Object, error) {
	stored := res
	if res.Version != res.StorageVersion && !res.Unstructured {
		stored = &registry.Resource{GroupVersionResource: res.GroupVersionResource, Kind: res.Kind}
		stored.Version = res.StorageVersion
	}
	obj, err := NewObject(stored)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(kv.Value, obj); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", kv.Key, err)
	}
	if stored != res {
		if obj, err = registry.ConvertTo(obj, res.GroupVersionKind()); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", kv.Key, err)
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(res.GroupVersionKind())
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	return obj, nil
}

// List reads every stored object of res at revision rev (0: the current
// one), decoded, with their records.
func List(ctx context.Context, store storage.Store, res *registry.Resource, rev int64) ([]storage.KeyValue, []runtime.Object, error) {
	page, err := store.List(ctx, ResourcePrefix(res), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, nil, err
	}
	objs := make([]runtime.Object, 0, len(page.Items))
	for _, kv := range page.Items {
		obj, err := Decode(res, kv)
		if err != nil {
			return nil, nil, err
		}
		objs = append(objs, obj)
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
	obj, err := registry.Scheme.New(res.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(res.GroupVersionKind())
	return obj, nil
}
