package apiserver

import (
	"context"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// toStorage returns obj in the version its kind is stored in: built-in
// kinds through the scheme, custom resources (copied) through their
// definition's converter, as upstream's storage encoding does. obj itself
// when it is in that version already.
func toStorage(ctx context.Context, res *registry.Resource, obj runtime.Object) (runtime.Object, error) {
	stored, err := registry.ToStorageVersion(obj)
	if err != nil {
		return nil, err
	}
	return customToStorage(ctx, res, stored)
}

// customToStorage is toStorage for custom resources; other objects are
// returned as they are.
func customToStorage(ctx context.Context, res *registry.Resource, obj runtime.Object) (runtime.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !res.Unstructured || res.StorageVersion == "" || u.GroupVersionKind().Version == res.StorageVersion {
		return obj, nil
	}
	objs := []*unstructured.Unstructured{u.DeepCopy()}
	if err := res.ConvertCustomTo(ctx, objs, res.StorageVersion); err != nil {
		return nil, err
	}
	return objs[0], nil
}

// fromStorage is what a write of a custom resource answers when it was
// stored in another version: the stored object converted back to res's
// version at revision rev, as upstream decodes what it wrote. Other
// objects are answered as written (obj).
func fromStorage(ctx context.Context, res *registry.Resource, obj, stored runtime.Object, rev int64) (runtime.Object, error) {
	u, ok := stored.(*unstructured.Unstructured)
	if !ok || stored == obj || !res.Unstructured {
		return obj, nil
	}
	objs := []*unstructured.Unstructured{u.DeepCopy()}
	if err := res.ConvertCustom(ctx, objs); err != nil {
		return nil, err
	}
	objs[0].SetResourceVersion(strconv.FormatInt(rev, 10))
	return objs[0], nil
}

// encodeForStorage serialises obj in its storage version.
func encodeForStorage(ctx context.Context, res *registry.Resource, obj runtime.Object) ([]byte, error) {
	stored, err := toStorage(ctx, res, obj)
	if err != nil {
		return nil, err
	}
	return layout.Encode(stored)
}

// storedBytes is what an update compares its new bytes with to find it
// changes nothing: for a custom resource the bytes stored (as upstream
// compares, so that rewriting an object stored in an older version
// stores it in the current one), for a built-in object old re-encoded.
func storedBytes(res *registry.Resource, current storage.KeyValue, old runtime.Object) ([]byte, error) {
	if res.Unstructured {
		return current.Value, nil
	}
	return layout.Encode(old)
}
