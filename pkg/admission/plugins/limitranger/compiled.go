package limitranger

import (
	"slices"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// compiledRange is what the plugin reads of one LimitRange, worked out once
// per stored object instead of walking its maps on every request: the
// defaults its Container items give and the bounds of each item, each
// ordered by resource name.
type compiledRange struct {
	// limits and requests are the defaults of the Container items; where
	// several items default a resource, the last one wins.
	limits, requests defaults
	items            []compiledItem
	// lastAnnotation is the annotation text set last (annotationText).
	lastAnnotation atomic.Pointer[string]
}

// defaults are the default values of one resource list.
type defaults struct {
	byName []namedQuantity
	// names are the names of byName, in order.
	names []corev1.ResourceName
	// template is the list of every default, to be copied into a
	// container that has no list; nil when there are none, or when a
	// quantity cannot be copied by value (it holds an arbitrary-precision
	// decimal, which its DeepCopy copies).
	template corev1.ResourceList
}

func newDefaults(l corev1.ResourceList) defaults {
	d := defaults{byName: byName(l)}
	if len(d.byName) == 0 {
		return d
	}
	plain := true
	for _, e := range d.byName {
		d.names = append(d.names, e.name)
		plain = plain && e.q == e.q.DeepCopy() // a copied decimal is a new pointer
	}
	if plain {
		d.template = make(corev1.ResourceList, len(d.byName))
		for _, e := range d.byName {
			d.template[e.name] = e.q
		}
	}
	return d
}

// namedQuantity is one entry of a resource list.
type namedQuantity struct {
	name corev1.ResourceName
	q    resource.Quantity
}

// compiledItem is one item of a LimitRange: its type and its min, max and
// limit/request ratio bounds.
type compiledItem struct {
	typ             corev1.LimitType
	min, max, ratio []namedQuantity
}

func compileRange(lr *corev1.LimitRange) *compiledRange {
	c := &compiledRange{items: make([]compiledItem, len(lr.Spec.Limits))}
	limits, requests := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		c.items[i] = compiledItem{typ: item.Type, min: byName(item.Min), max: byName(item.Max), ratio: byName(item.MaxLimitRequestRatio)}
		if item.Type == corev1.LimitTypeContainer {
			for k, v := range item.Default {
				limits[k] = v
			}
			for k, v := range item.DefaultRequest {
				requests[k] = v
			}
		}
	}
	c.limits, c.requests = newDefaults(limits), newDefaults(requests)
	return c
}

// byName returns the entries of l ordered by resource name.
func byName(l corev1.ResourceList) []namedQuantity {
	if len(l) == 0 {
		return nil
	}
	out := make([]namedQuantity, 0, len(l))
	for k, v := range l {
		out = append(out, namedQuantity{k, v.DeepCopy()})
	}
	slices.SortFunc(out, func(a, b namedQuantity) int { return strings.Compare(string(a.name), string(b.name)) })
	return out
}

// maxCompiledRanges is how many compiled LimitRanges are kept.
const maxCompiledRanges = 1024

// compiled returns the compiled form of lr, worked out once per stored
// object (the cache hands out the same object until it changes).
func (p *Plugin) compiled(lr *corev1.LimitRange) *compiledRange {
	if c, ok := p.ranges.Load(lr); ok {
		return c
	}
	c := compileRange(lr)
	p.ranges.Store(lr, c)
	return c
}
