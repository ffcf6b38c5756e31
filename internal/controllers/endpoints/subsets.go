package endpoints

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/dump"
)

// maxCapacity is the most addresses an Endpoints object holds; past it
// the controller truncates and annotates it over capacity.
const maxCapacity = 1000

// PodAddress is the address of pod for svc: the pod's first IP of the
// Service's first IP family (or, without families, of its cluster IP's
// family, or of the pod IP's), with the pod's node and a reference to it.
// It fails when the pod has no IP of that family.
func PodAddress(svc *corev1.Service, pod *corev1.Pod) (corev1.EndpointAddress, error) {
	wantIPv6 := false
	switch {
	case len(svc.Spec.IPFamilies) > 0:
		wantIPv6 = svc.Spec.IPFamilies[0] == corev1.IPv6Protocol
	case svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone:
		wantIPv6 = isIPv6(svc.Spec.ClusterIP)
	default:
		wantIPv6 = isIPv6(pod.Status.PodIP)
	}
	for _, podIP := range pod.Status.PodIPs {
		ip, ok := parseSloppy(podIP.IP)
		if !ok || isIPv6Addr(ip) != wantIPv6 {
			continue
		}
		nodeName := pod.Spec.NodeName
		return corev1.EndpointAddress{IP: ip.Unmap().String(), NodeName: &nodeName, TargetRef: &corev1.ObjectReference{
			Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}}, nil
	}
	return corev1.EndpointAddress{}, fmt.Errorf("failed to find a matching endpoint for service %v", svc.Name)
}

func isIPv6(s string) bool {
	ip, ok := parseSloppy(s)
	return ok && isIPv6Addr(ip)
}

// isIPv6Addr: an IPv6 address that is not an IPv4-mapped one.
func isIPv6Addr(ip netip.Addr) bool { return ip.Is6() && !ip.Is4In6() }

// parseSloppy parses an IP as Kubernetes's ParseIPSloppy does: an IPv4
// address may have leading zeros in its octets (read as decimal).
func parseSloppy(s string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip, true
	}
	var a [4]int
	var rest string
	if n, _ := fmt.Sscanf(s, "%d.%d.%d.%d%s", &a[0], &a[1], &a[2], &a[3], &rest); n != 4 {
		return netip.Addr{}, false
	}
	var b [4]byte
	for i, v := range a {
		if v < 0 || v > 255 {
			return netip.Addr{}, false
		}
		b[i] = byte(v)
	}
	return netip.AddrFrom4(b), true
}

// addressKey identifies an address across subsets: its IP and its
// target's UID.
type addressKey struct {
	ip  string
	uid types.UID
}

// noPort stands for "no ports" while subsets are regrouped.
var noPort = corev1.EndpointPort{Port: -1}

// RepackSubsets regroups subsets into the fewest: the ports that have
// exactly the same addresses, each equally ready, share one subset. An
// address is one per IP and target UID; listed both ready and not ready
// for a port, it is not ready for it. The result is sorted as SortSubsets
// sorts.
func RepackSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	addrs := map[addressKey]*corev1.EndpointAddress{}
	var order []corev1.EndpointPort
	byPort := map[corev1.EndpointPort]map[*corev1.EndpointAddress]bool{}
	note := func(addr corev1.EndpointAddress, port corev1.EndpointPort, ready bool) {
		k := addressKey{ip: addr.IP}
		if addr.TargetRef != nil {
			k.uid = addr.TargetRef.UID
		}
		a := addrs[k]
		if a == nil {
			a = &addr
			addrs[k] = a
		}
		set := byPort[port]
		if set == nil {
			set = map[*corev1.EndpointAddress]bool{}
			byPort[port] = set
			order = append(order, port)
		}
		if wasReady, seen := set[a]; !seen || wasReady {
			set[a] = ready
		}
	}
	for _, s := range subsets {
		ports := s.Ports
		if len(ports) == 0 {
			ports = []corev1.EndpointPort{noPort}
		}
		for _, p := range ports {
			for _, a := range s.Addresses {
				note(a, p, true)
			}
			for _, a := range s.NotReadyAddresses {
				note(a, p, false)
			}
		}
	}
	return SortSubsets(groupByAddresses(order, byPort))
}

// groupByAddresses makes one subset of each set of addresses (with their
// readiness) and the ports that have exactly that set.
func groupByAddresses(order []corev1.EndpointPort, byPort map[corev1.EndpointPort]map[*corev1.EndpointAddress]bool) []corev1.EndpointSubset {
	type group struct {
		set   map[*corev1.EndpointAddress]bool
		ports []corev1.EndpointPort
	}
	var groups []*group
	for _, port := range order {
		set := byPort[port]
		var g *group
		for _, other := range groups {
			if sameAddressSet(other.set, set) {
				g = other
				break
			}
		}
		if g == nil {
			g = &group{set: set}
			groups = append(groups, g)
		}
		if port.Port > 0 {
			g.ports = append(g.ports, port)
		}
	}
	out := []corev1.EndpointSubset{}
	for _, g := range groups {
		var s corev1.EndpointSubset
		for a, ready := range g.set {
			if ready {
				s.Addresses = append(s.Addresses, *a)
			} else {
				s.NotReadyAddresses = append(s.NotReadyAddresses, *a)
			}
		}
		s.Ports = g.ports
		out = append(out, s)
	}
	return out
}

// sameAddressSet: the same addresses (by identity), each as ready in both.
func sameAddressSet(a, b map[*corev1.EndpointAddress]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for addr, ready := range a {
		if r, ok := b[addr]; !ok || r != ready {
			return false
		}
	}
	return true
}

// SortSubsets sorts each subset's addresses by IP then target UID, its
// ports and the subsets themselves by the hash upstream orders them by
// (FNV-128a of their dump.ForHash printing), so that equal contents
// always print the same.
func SortSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	for i := range subsets {
		s := &subsets[i]
		slices.SortStableFunc(s.Addresses, compareAddresses)
		slices.SortStableFunc(s.NotReadyAddresses, compareAddresses)
		slices.SortStableFunc(s.Ports, func(a, b corev1.EndpointPort) int { return bytes.Compare(hashOf(a), hashOf(b)) })
	}
	slices.SortStableFunc(subsets, func(a, b corev1.EndpointSubset) int { return bytes.Compare(hashOf(a), hashOf(b)) })
	return subsets
}

func compareAddresses(a, b corev1.EndpointAddress) int {
	if c := cmp.Compare(a.IP, b.IP); c != 0 {
		return c
	}
	switch {
	case a.TargetRef == nil && b.TargetRef == nil:
		return 0
	case a.TargetRef == nil:
		return -1
	case b.TargetRef == nil:
		return 1
	}
	return cmp.Compare(a.TargetRef.UID, b.TargetRef.UID)
}

func hashOf(obj any) []byte {
	h := fnv.New128a()
	fmt.Fprintf(h, "%v", dump.ForHash(obj))
	return h.Sum(nil)
}

// truncate keeps at most maxCapacity addresses in ep: when the ready ones
// alone are too many, only ready ones are kept; else the not-ready ones
// are cut. Each subset keeps its share (rounded up, while room lasts). It
// reports whether anything was cut.
func truncate(ep *corev1.Endpoints) bool {
	ready, notReady := 0, 0
	for _, s := range ep.Subsets {
		ready += len(s.Addresses)
		notReady += len(s.NotReadyAddresses)
	}
	if ready+notReady <= maxCapacity {
		return false
	}
	cutReady := ready > maxCapacity
	room, total := maxCapacity-ready, notReady
	if cutReady {
		room, total = maxCapacity, ready
	}
	left := room
	for i := range ep.Subsets {
		s := &ep.Subsets[i]
		n := len(s.NotReadyAddresses)
		if cutReady {
			n = len(s.Addresses)
		}
		keep := min(int(math.Ceil(float64(n)/float64(total)*float64(room))), left)
		if cutReady {
			s.Addresses = s.Addresses[:min(keep, len(s.Addresses))]
			s.NotReadyAddresses = []corev1.EndpointAddress{}
			left -= len(s.Addresses)
		} else {
			s.NotReadyAddresses = s.NotReadyAddresses[:min(keep, len(s.NotReadyAddresses))]
			left -= len(s.NotReadyAddresses)
		}
	}
	return true
}

// Truncate is truncate, for differential tests.
func Truncate(ep *corev1.Endpoints) bool { return truncate(ep) }

// subsetsEqual compares subsets ignoring the resourceVersion of target
// references (nil and empty lists alike).
func subsetsEqual(a, b []corev1.EndpointSubset) bool {
	return equality.Semantic.DeepEqual(withoutRefVersions(a), withoutRefVersions(b))
}

func withoutRefVersions(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	out := make([]corev1.EndpointSubset, len(subsets))
	for i := range subsets {
		s := subsets[i].DeepCopy()
		for _, list := range [][]corev1.EndpointAddress{s.Addresses, s.NotReadyAddresses} {
			for j := range list {
				if list[j].TargetRef != nil {
					list[j].TargetRef.ResourceVersion = ""
				}
			}
		}
		out[i] = *s
	}
	return out
}
