package servicecidrs

import (
	"net/netip"

	networkingv1 "k8s.io/api/networking/v1"
)

// The range arithmetic of upstream's pkg/api/servicecidr, which the
// controller's decisions rest on: which ServiceCIDRs overlap a range,
// which contain a whole range, and which hold an address.

// prefixes are the parsed CIDRs of sc (a CIDR that does not parse, which
// validation keeps out, is skipped).
func prefixes(sc *networkingv1.ServiceCIDR) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(sc.Spec.CIDRs))
	for _, cidr := range sc.Spec.CIDRs {
		if p, err := netip.ParsePrefix(cidr); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// anyPrefix reports whether one of sc's CIDRs satisfies match.
func anyPrefix(sc *networkingv1.ServiceCIDR, match func(netip.Prefix) bool) bool {
	for _, p := range prefixes(sc) {
		if match(p) {
			return true
		}
	}
	return false
}

// containsPrefix reports whether outer holds every address of inner:
// they overlap and outer is no longer.
func containsPrefix(outer, inner netip.Prefix) bool {
	return outer.Overlaps(inner) && outer.Bits() <= inner.Bits()
}

// holdsAddress reports whether addr is one a Service can have from p: in
// p, and neither its network address nor, for IPv4, its broadcast
// address (which no allocator hands out, so a ServiceCIDR "holding" them
// protects nothing).
func holdsAddress(p netip.Prefix, addr netip.Addr) bool {
	if !p.Contains(addr) || p.Masked().Addr() == addr {
		return false
	}
	return !addr.Is4() || addr != lastAddress(p)
}

// lastAddress is the highest address of p (IPv4's broadcast address).
func lastAddress(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	hostBits := len(b)*8 - p.Bits()
	for i := len(b) - 1; i >= 0 && hostBits > 0; i-- {
		n := min(hostBits, 8)
		b[i] |= byte(1<<n - 1)
		hostBits -= n
	}
	addr, _ := netip.AddrFromSlice(b)
	return addr
}
