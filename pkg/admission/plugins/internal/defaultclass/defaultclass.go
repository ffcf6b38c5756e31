// Package defaultclass chooses a cluster's default class (StorageClass,
// IngressClass) the way upstream's defaulting plugins do: among the classes
// marked default, the newest wins, ties going to the first name in order.
//
// It only chooses; what marks a class as default, and what a plugin does
// with the name, stay with each plugin.
package defaultclass

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Name lists the objects of gvr in cache and names the newest object of type
// T for which isDefault holds (creation times compared in nanoseconds, as
// upstream; ties going to the first name), or "" when there is none.
func Name[T metav1.Object](ctx context.Context, cache admission.ObjectCache, gvr schema.GroupVersionResource, isDefault func(T) bool) (string, error) {
	objs, err := cache.ListCachedObjects(ctx, gvr, "", nil)
	if err != nil {
		return "", err
	}
	var best T
	found := false
	for _, o := range objs {
		c, ok := o.(T)
		if !ok || !isDefault(c) {
			continue
		}
		if !found || newer(c, best) {
			best, found = c, true
		}
	}
	if !found {
		return "", nil
	}
	return best.GetName(), nil
}

// newer reports whether a comes before b: newer, or as new and first by name.
func newer(a, b metav1.Object) bool {
	ta, tb := a.GetCreationTimestamp().UnixNano(), b.GetCreationTimestamp().UnixNano()
	if ta == tb {
		return a.GetName() < b.GetName()
	}
	return ta > tb
}
