package endpointslicemirroring

import (
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	endpointsliceutil "k8s.io/endpointslice/util"
	netutils "k8s.io/utils/net"

	"github.com/admitd/admitd/internal/controllers/endpoints"
)

// sliceKey identifies the slice an address goes to: its address type and
// the hash of the ports of its subset ("IPv4-<hash>").
type sliceKey string

func newSliceKey(ports []discovery.EndpointPort, addrType discovery.AddressType) sliceKey {
	// NewPortMapKey sorts ports in place: the slice keeps that order.
	return sliceKey(string(addrType) + "-" + string(endpointsliceutil.NewPortMapKey(ports)))
}

// DesiredSlice is the content of one mirrored slice: the endpoints of one
// address type of one subset, with that subset's ports.
type DesiredSlice struct {
	key         sliceKey
	AddressType discovery.AddressType
	Ports       []discovery.EndpointPort
	set         endpointsliceutil.EndpointSet
	order       []*discovery.Endpoint
}

// Endpoints are the slice's endpoints, one per distinct endpoint (the last
// one given wins, as in an EndpointSet), in the order first given.
func (d *DesiredSlice) Endpoints() []discovery.Endpoint {
	out := make([]discovery.Endpoint, 0, d.set.Len())
	for _, e := range d.order {
		if d.set.Get(e) == e {
			out = append(out, *e)
		}
	}
	return out
}

func (d *DesiredSlice) add(e *discovery.Endpoint) {
	d.set.Insert(e)
	d.order = append(d.order, e)
}

// Mirror is what an Endpoints object mirrors to: a desired slice for each
// address type of each of its repacked subsets (empty when the subset has
// no address of that type), and how many addresses were left out.
type Mirror struct {
	Slices []*DesiredSlice
	// Invalid counts addresses whose IP does not parse.
	Invalid int
	// Skipped counts addresses not mirrored: invalid ones and those past
	// the per-subset limit.
	Skipped int
}

var addressTypes = []discovery.AddressType{discovery.AddressTypeIPv4, discovery.AddressTypeIPv6}

// Desired computes the mirror of ep: its subsets repacked, at most
// maxPerSubset addresses of each (ready addresses first) split by address
// type.
func Desired(ep *corev1.Endpoints, maxPerSubset int) Mirror {
	var m Mirror
	byKey := map[sliceKey]*DesiredSlice{}
	for _, subset := range endpoints.RepackSubsets(ep.Subsets) {
		perType := map[discovery.AddressType]*DesiredSlice{}
		for _, addrType := range addressTypes {
			ports := slicePorts(subset.Ports)
			key := newSliceKey(ports, addrType)
			d := byKey[key]
			if d == nil {
				d = &DesiredSlice{key: key, AddressType: addrType, set: endpointsliceutil.EndpointSet{}}
				byKey[key] = d
				m.Slices = append(m.Slices, d)
			}
			d.Ports = ports
			perType[addrType] = d
		}
		added := 0
		add := func(addrs []corev1.EndpointAddress, ready bool) {
			for _, a := range addrs {
				if added >= maxPerSubset {
					return
				}
				e, addrType, ok := addressEndpoint(a, ready)
				if !ok {
					m.Invalid++
					continue
				}
				perType[addrType].add(e)
				added++
			}
		}
		add(subset.Addresses, true)
		add(subset.NotReadyAddresses, false)
		m.Skipped += len(subset.Addresses) + len(subset.NotReadyAddresses) - added
	}
	return m
}

// slicePorts are a subset's ports as a slice's (never nil).
func slicePorts(ports []corev1.EndpointPort) []discovery.EndpointPort {
	out := []discovery.EndpointPort{}
	for _, p := range ports {
		if p.AppProtocol != nil {
			appProtocol := *p.AppProtocol
			p.AppProtocol = &appProtocol
		}
		out = append(out, discovery.EndpointPort{Name: &p.Name, Port: &p.Port, Protocol: &p.Protocol, AppProtocol: p.AppProtocol})
	}
	return out
}

// addressEndpoint is the endpoint of an address (its IP in canonical form,
// ready or not, its node, hostname and target) and its address type;
// false when the IP does not parse.
func addressEndpoint(a corev1.EndpointAddress, ready bool) (*discovery.Endpoint, discovery.AddressType, bool) {
	ip := netutils.ParseIPSloppy(a.IP)
	if ip == nil {
		return nil, "", false
	}
	addrType := discovery.AddressTypeIPv4
	if ip.To4() == nil {
		addrType = discovery.AddressTypeIPv6
	}
	e := &discovery.Endpoint{Addresses: []string{ip.String()}, Conditions: discovery.EndpointConditions{Ready: &ready},
		TargetRef: a.TargetRef, NodeName: a.NodeName}
	if a.Hostname != "" {
		hostname := a.Hostname
		e.Hostname = &hostname
	}
	return e, addrType, true
}

// NewSlice is the slice mirroring d for ep: ep's labels and annotations
// (but the trigger-time and last-applied ones) with the service-name and
// managed-by labels, controlled by ep, named name or, when name is empty,
// generated from "<endpoints>-".
func NewSlice(ep *corev1.Endpoints, d *DesiredSlice, name string) *discovery.EndpointSlice {
	isController := true
	s := &discovery.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ep.Namespace, Labels: map[string]string{}, Annotations: map[string]string{},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Endpoints", Name: ep.Name, UID: ep.UID,
				Controller: &isController, BlockOwnerDeletion: &isController}}},
		AddressType: d.AddressType,
		Ports:       d.Ports,
		Endpoints:   d.Endpoints(),
	}
	for k, v := range ep.Labels {
		s.Labels[k] = v
	}
	s.Labels[discovery.LabelServiceName] = ep.Name
	s.Labels[discovery.LabelManagedBy] = ManagedBy
	for k, v := range mirroredAnnotations(ep.Annotations) {
		s.Annotations[k] = v
	}
	if name == "" {
		s.GenerateName = namePrefix(ep.Name)
	}
	return s
}

// mirroredAnnotations are an Endpoints object's annotations a slice
// copies.
func mirroredAnnotations(a map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		if k != corev1.EndpointsLastChangeTriggerTime && k != corev1.LastAppliedConfigAnnotation {
			out[k] = v
		}
	}
	return out
}

// namePrefix is "<name>-", or name when that is not a valid name prefix
// (as upstream checks it: never for a valid Endpoints name).
func namePrefix(name string) string {
	if len(apivalidation.NameIsDNSSubdomain(name+"-", true)) != 0 {
		return name
	}
	return name + "-"
}
