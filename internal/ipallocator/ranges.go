package ipallocator

import (
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// cidrRange is the part of one CIDR of a ServiceCIDR that cluster IPs come
// from: every address but the network address and, for IPv4, the
// broadcast address. Dynamic allocation starts in the upper part, above
// the first offset addresses, which are left to Services that ask for an
// address while others are free (KEP-3070).
type cidrRange struct {
	prefix      netip.Prefix
	first, last netip.Addr
	upper       netip.Addr // first address of the upper part
	offset      uint64     // size of the lower part
	size        uint64     // usable addresses, at most math.MaxUint64
}

// newRange is the range of cidr, a canonical CIDR as ServiceCIDR
// validation admits; an IPv6 prefix shorter than /64 has none, as
// upstream's allocator.
func newRange(cidr string) (*cidrRange, error) {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, err
	}
	prefix = prefix.Masked()
	if prefix.Addr().Is6() && prefix.Bits() < 64 {
		return nil, fmt.Errorf("shortest allowed prefix length for service CIDR is 64, got %d", prefix.Bits())
	}
	r := &cidrRange{prefix: prefix, first: prefix.Addr().Next(), last: broadcast(prefix), size: usableAddresses(prefix)}
	if prefix.Addr().Is4() {
		r.last = r.last.Prev()
	}
	r.offset = lowerPartSize(prefix)
	r.upper = addOffset(r.first, r.offset)
	return r, nil
}

// family is the IP family of the range.
func (r *cidrRange) family() corev1.IPFamily {
	if r.prefix.Addr().Is4() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// contains reports whether ip is one of the range's addresses.
func (r *cidrRange) contains(ip netip.Addr) bool {
	return r.first.IsValid() && ip.Compare(r.first) >= 0 && ip.Compare(r.last) <= 0
}

// candidates are the addresses to try for a dynamic allocation: the upper
// part from a random address on, round to where it started, then the
// lower part the same way.
func (r *cidrRange) candidates(rng *rand.Rand) iter.Seq[netip.Addr] {
	return func(yield func(netip.Addr) bool) {
		upperSize := r.size - r.offset
		if r.size == 0 || upperSize == 0 {
			return
		}
		if !walk(r.upper, r.last, randomBelow(rng, upperSize), yield) || r.offset == 0 {
			return
		}
		walk(r.first, r.upper.Prev(), randomBelow(rng, r.offset), yield)
	}
}

// walk yields the addresses of [first, last] from first+start on, round to
// where it started; false when yield asked to stop.
func walk(first, last netip.Addr, start uint64, yield func(netip.Addr) bool) bool {
	from := addOffset(first, start)
	if !from.IsValid() || from.Compare(last) > 0 {
		from = first
	}
	ip := from
	for {
		if !yield(ip) {
			return false
		}
		if ip = ip.Next(); !ip.IsValid() || ip.Compare(last) > 0 {
			ip = first
		}
		if ip == from {
			return true
		}
	}
}

func randomBelow(rng *rand.Rand, n uint64) uint64 {
	if n == math.MaxUint64 {
		return rng.Uint64()
	}
	return rng.Uint64N(n)
}

// usableAddresses: 2^hostbits less the network address, and less the
// broadcast address for IPv4; at most math.MaxUint64.
func usableAddresses(p netip.Prefix) uint64 {
	hostBits := p.Addr().BitLen() - p.Bits()
	if hostBits >= 64 {
		return math.MaxUint64
	}
	n := uint64(1)<<hostBits - 1
	if p.Addr().Is4() && n > 0 {
		n--
	}
	return n
}

// lowerPartSize is min(max(16, size/16), 256) of the CIDR's size, 0 for
// CIDRs of 16 addresses or fewer.
func lowerPartSize(p netip.Prefix) uint64 {
	hostBits := p.Addr().BitLen() - p.Bits()
	if hostBits > 12 {
		return 256
	}
	size := uint64(1) << hostBits
	if size <= 16 {
		return 0
	}
	return min(max(16, size/16), 256)
}

// broadcast is the last address of p.
func broadcast(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for bit := p.Bits(); bit < len(b)*8; bit++ {
		b[bit/8] |= 0x80 >> (bit % 8)
	}
	addr, _ := netip.AddrFromSlice(b)
	return addr
}

// addOffset is addr + n; the invalid address past the family's last one.
func addOffset(addr netip.Addr, n uint64) netip.Addr {
	b := addr.AsSlice()
	carry := n
	for i := len(b) - 1; i >= 0 && carry > 0; i-- {
		sum := uint64(b[i]) + carry&0xff
		b[i] = byte(sum)
		carry = carry>>8 + sum>>8
	}
	if carry > 0 {
		return netip.Addr{}
	}
	out, _ := netip.AddrFromSlice(b)
	return out
}

// addrOf is ip as a netip.Addr, IPv4 in its 4-byte form.
func addrOf(ip net.IP) (netip.Addr, bool) {
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	return netip.AddrFromSlice(ip)
}
