package quota

import (
	"errors"
	"fmt"
	"slices"

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
	resources := r.Tracked(names)
	matched := r.matched(resources, names)
	for _, gr := range resources {
		e := r.For(gr)
		tracked := e.MatchingResources(names)
		if c, ok := e.(extraCharger); ok && len(tracked) > 0 {
			for _, n := range matched {
				if c.AlsoCharges(n) && !slices.Contains(tracked, n) {
					tracked = append(tracked, n)
				}
			}
		}
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

// extraCharger is an evaluator whose usage also names resources it does
// not track: upstream masks the usage of every evaluator tracking a name
// of the quota to the names any evaluator tracks, so they count where
// another one tracks them (a resource claim's implicit extended
// resources, which the pod evaluator tracks).
type extraCharger interface {
	AlsoCharges(n corev1.ResourceName) bool
}

// matched are the names some evaluator of resources tracks.
func (r *Registry) matched(resources []schema.GroupResource, names []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, gr := range resources {
		for _, n := range r.For(gr).MatchingResources(names) {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}
