package endpointslicemirroring

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	endpointsliceutil "k8s.io/endpointslice/util"
)

// Plan is what turns the mirrored slices into an Endpoints object's
// mirror: the slices to create, update and delete, and the existing ones
// that already are what they should be.
type Plan struct {
	Create, Update, Delete, Keep []*discovery.EndpointSlice
}

// PlanSlices plans the writes that make existing (the slices mirroring ep)
// m: a slice for each desired slice with endpoints, the first existing one
// of its key rewritten when it differs, the others of that key deleted; the
// slices of keys no longer desired deleted. A slice to create and one to
// delete of the same address type become an update of the latter.
func PlanSlices(ep *corev1.Endpoints, existing []*discovery.EndpointSlice, m Mirror) Plan {
	byKey := map[sliceKey][]*discovery.EndpointSlice{}
	var keyOrder []sliceKey
	for _, s := range existing {
		k := newSliceKey(slices.Clone(s.Ports), s.AddressType) // a cached slice is not sorted in place
		if _, seen := byKey[k]; !seen {
			keyOrder = append(keyOrder, k)
		}
		byKey[k] = append(byKey[k], s)
	}
	var p Plan
	desired := map[sliceKey]bool{}
	for _, d := range m.Slices {
		desired[d.key] = true
		p.planKey(ep, byKey[d.key], d)
	}
	for _, k := range keyOrder {
		if !desired[k] {
			p.Delete = append(p.Delete, byKey[k]...)
		}
	}
	p.recycle()
	return p
}

// planKey plans the slices of one key.
func (p *Plan) planKey(ep *corev1.Endpoints, existing []*discovery.EndpointSlice, d *DesiredSlice) {
	if d.set.Len() == 0 {
		p.Delete = append(p.Delete, existing...)
		return
	}
	if len(existing) == 0 {
		p.Create = append(p.Create, NewSlice(ep, d, ""))
		return
	}
	first := existing[0]
	p.Delete = append(p.Delete, existing[1:]...)
	if upToDate(ep, first, d) {
		p.Keep = append(p.Keep, first)
		return
	}
	p.Update = append(p.Update, NewSlice(ep, d, first.Name))
}

// upToDate: s has d's endpoints, ep's labels and annotations, and is owned
// by this ep (not an earlier one of the same name).
func upToDate(ep *corev1.Endpoints, s *discovery.EndpointSlice, d *DesiredSlice) bool {
	matched := 0
	for i := range s.Endpoints {
		want := d.set.Get(&s.Endpoints[i])
		if want == nil || !endpointsliceutil.EndpointsEqualBeyondHash(want, &s.Endpoints[i]) {
			return false
		}
		matched++
	}
	if matched != d.set.Len() {
		return false
	}
	labels := map[string]string{}
	for k, v := range s.Labels {
		if k != discovery.LabelManagedBy && k != discovery.LabelServiceName {
			labels[k] = v
		}
	}
	return equality.Semantic.DeepEqual(ep.Labels, labels) &&
		equality.Semantic.DeepEqual(mirroredAnnotations(ep.Annotations), s.Annotations) &&
		!ownedByEarlier(ep, s)
}

func ownedByEarlier(ep *corev1.Endpoints, s *discovery.EndpointSlice) bool {
	for _, o := range s.OwnerReferences {
		if o.Kind == "Endpoints" && o.Name == ep.Name && o.UID != ep.UID {
			return true
		}
	}
	return false
}

// recycle turns pairs of a slice to create and one to delete, of the same
// address type, into an update of the one to delete.
func (p *Plan) recycle() {
	var create, del []*discovery.EndpointSlice
	reuse := map[discovery.AddressType][]*discovery.EndpointSlice{}
	for _, s := range p.Delete {
		reuse[s.AddressType] = append(reuse[s.AddressType], s)
	}
	recycled := map[*discovery.EndpointSlice]bool{}
	for _, s := range p.Create {
		free := reuse[s.AddressType]
		if len(free) == 0 {
			create = append(create, s)
			continue
		}
		s.Name = free[0].Name
		recycled[free[0]] = true
		reuse[s.AddressType] = free[1:]
		p.Update = append(p.Update, s)
	}
	for _, s := range p.Delete {
		if !recycled[s] {
			del = append(del, s)
		}
	}
	p.Create, p.Delete = create, del
}
