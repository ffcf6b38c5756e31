package apiserver

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// typedList is a built-in resource's list as its Go type (a
// corev1.PodList), which protobuf encodes: the answer to a client that
// takes only protobuf (collectionMedia).
func typedList(res *registry.Resource, items []runtime.Object, lm metav1.ListMeta) (runtime.Object, error) {
	gvk := res.GroupVersion().WithKind(res.ListKind)
	list, err := registry.Scheme().New(gvk)
	if err != nil {
		return nil, fmt.Errorf("no list type for %s: %w", gvk, err)
	}
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	acc, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	acc.SetResourceVersion(lm.ResourceVersion)
	acc.SetContinue(lm.Continue)
	acc.SetRemainingItemCount(lm.RemainingItemCount)
	list.GetObjectKind().SetGroupVersionKind(gvk)
	return list, nil
}
