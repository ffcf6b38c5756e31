package apiserver

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

// storageKey is where an object lives: /registry/<group>/<resource>/[<ns>/]<name>.
func storageKey(res *registry.Resource, namespace, name string) string {
	return resourcePrefix(res) + namespacePart(res, namespace) + name
}

// resourcePrefix is the key prefix of every object of the resource (all
// versions of a resource share it).
func resourcePrefix(res *registry.Resource) string {
	g := res.Group
	if g == "" {
		g = "core"
	}
	return "/registry/" + g + "/" + res.Resource + "/"
}

func namespacePart(res *registry.Resource, namespace string) string {
	if !res.Namespaced {
		return ""
	}
	return namespace + "/"
}

// listPrefix is the key prefix of a list in namespace ("" = all namespaces).
func listPrefix(res *registry.Resource, namespace string) string {
	if namespace == "" || !res.Namespaced {
		return resourcePrefix(res)
	}
	return resourcePrefix(res) + namespace + "/"
}

// encodeForStorage serialises obj without its resourceVersion, which is the
// storage revision and is stamped on read.
func encodeForStorage(obj runtime.Object) ([]byte, error) {
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

// listStored reads every stored object of res at revision rev (0: the
// current one), decoded, with their records.
func listStored(ctx context.Context, store storage.Store, res *registry.Resource, rev int64) ([]storage.KeyValue, []runtime.Object, error) {
	page, err := store.List(ctx, resourcePrefix(res), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, nil, err
	}
	objs := make([]runtime.Object, 0, len(page.Items))
	for _, kv := range page.Items {
		obj, err := decodeFromStorage(res, kv)
		if err != nil {
			return nil, nil, err
		}
		objs = append(objs, obj)
	}
	return page.Items, objs, nil
}

// decodeFromStorage decodes a stored value as an object of the resource,
// in the resource's version, with resourceVersion set from the revision.
func decodeFromStorage(res *registry.Resource, kv storage.KeyValue) (runtime.Object, error) {
	stored := res
	if res.Version != res.StorageVersion && !res.Unstructured {
		stored = &registry.Resource{GroupVersionResource: res.GroupVersionResource, Kind: res.Kind}
		stored.Version = res.StorageVersion
	}
	obj, err := newObject(stored)
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

// newObject returns an empty object of the resource's kind.
func newObject(res *registry.Resource) (runtime.Object, error) {
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
