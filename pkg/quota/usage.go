package quota

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ListFunc lists the objects of a resource in a namespace.
type ListFunc func(gr schema.GroupResource, namespace string) ([]runtime.Object, error)

// Usage sums what the objects of the namespace that q's scopes select
// consume of the names of hard the evaluators track (each such name is
// present, zero when nothing consumes it). A resource whose listing fails
// is left out and its error returned with the rest.
func (r *Registry) Usage(q *corev1.ResourceQuota, hard corev1.ResourceList, list ListFunc) (corev1.ResourceList, error) {
	names := Names(hard)
	out := corev1.ResourceList{}
	var errs []error
	for _, gr := range r.Tracked(names) {
		e := r.For(gr)
		tracked := e.MatchingResources(names)
		if len(tracked) == 0 {
			continue
		}
		used, err := usageOf(e, q, gr, tracked, list)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = Add(out, used)
	}
	return out, errors.Join(errs...)
}

// usageOf sums the usage of gr's objects selected by q's scopes, masked to
// tracked.
func usageOf(e Evaluator, q *corev1.ResourceQuota, gr schema.GroupResource, tracked []corev1.ResourceName, list ListFunc) (corev1.ResourceList, error) {
	used := make(corev1.ResourceList, len(tracked))
	for _, n := range tracked {
		used[n] = zero()
	}
	objs, err := list(gr, q.Namespace)
	if err != nil {
		return nil, fmt.Errorf("failed to list content: %v", err)
	}
	sels := QuotaSelectors(q)
	for _, obj := range objs {
		picked, err := e.MatchingScopes(obj, sels)
		if err != nil || len(picked) != len(sels) {
			continue
		}
		u, err := e.Usage(obj)
		if err != nil {
			return nil, err
		}
		for _, n := range tracked {
			if v, ok := u[n]; ok {
				s := used[n]
				s.Add(v)
				used[n] = s
			}
		}
	}
	return used, nil
}
