// Package serviceip allocates Service cluster IPs from one IPv4 or IPv6
// range (kube-apiserver's --service-cluster-ip-range) and node ports from
// one port range (--service-node-port-range), as upstream's single-range
// allocators do. It keeps its state in memory: the server rebuilds it from
// the stored Services at start. It is not a ServiceCIDR or IPAddress
// controller, and it knows nothing of Services themselves.
package serviceip

import (
	"errors"
	"fmt"
	"math/big"
	"net"
)

// DefaultRange is kube-apiserver's default --service-cluster-ip-range.
const DefaultRange = "10.0.0.0/24"

// Errors of Allocate and AllocateNext, worded as upstream's.
var (
	// ErrFull: no free address is left.
	ErrFull = errors.New("range is full")
	// ErrAllocated: the requested address is taken.
	ErrAllocated = errors.New("provided IP is already allocated")
)

// NotInRangeError is the refusal of an address outside the range.
type NotInRangeError struct {
	IP         net.IP
	ValidRange string
}

func (e *NotInRangeError) Error() string {
	return fmt.Sprintf("the provided IP (%v) is not in the valid range. The range of valid IPs is %s", e.IP, e.ValidRange)
}

// Allocator hands out the addresses of one CIDR. The network address (and,
// for IPv4, the broadcast address) are never handed out; the first usable
// address is reserved for the "kubernetes" Service. Safe for concurrent use.
type Allocator struct {
	cidr *net.IPNet
	base *big.Int // the first usable address
	// addresses by their offset from base; upstream leaves the first
	// min(max(16, size/16), 256) to explicit requests while others are free.
	addrs *pool
}

// New returns an allocator of cidr ("10.0.0.0/24") with its first address
// reserved.
func New(cidr string) (*Allocator, error) {
	_, ipnet, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("invalid service cluster IP range %q: %w", cidr, err)
	}
	ones, bits := ipnet.Mask.Size()
	usable := int64(1 << 20)
	if bits-ones < 21 {
		usable = int64(1)<<(bits-ones) - 1 // the network address
		if ipnet.IP.To4() != nil {
			usable-- // the broadcast address
		}
	}
	if usable < 2 {
		return nil, fmt.Errorf("service cluster IP range %q is too small", cidr)
	}
	size := int(usable)
	a := &Allocator{cidr: ipnet, base: new(big.Int).Add(ipToInt(ipnet.IP), big.NewInt(1)),
		addrs: newPool(size, min(max(16, size/16), 256))}
	a.addrs.take(0) // the kubernetes Service
	return a, nil
}

// Range is the CIDR the allocator serves.
func (a *Allocator) Range() string { return a.cidr.String() }

// Reserved is the address kept for the "kubernetes" Service.
func (a *Allocator) Reserved() net.IP { return a.ip(0) }

// Allocate takes ip: ErrAllocated when it is taken, a *NotInRangeError
// when it is not an address of the range.
func (a *Allocator) Allocate(ip net.IP) error {
	i, ok := a.index(ip)
	if !ok {
		return &NotInRangeError{IP: ip, ValidRange: a.cidr.String()}
	}
	if !a.addrs.take(i) {
		return ErrAllocated
	}
	return nil
}

// AllocateNext takes a random free address, preferring those above the
// part of the range left to explicit requests; ErrFull when none is free.
func (a *Allocator) AllocateNext() (net.IP, error) {
	i, ok := a.addrs.next()
	if !ok {
		return nil, ErrFull
	}
	return a.ip(i), nil
}

// Release frees ip; an address not taken, or not of the range, is ignored.
func (a *Allocator) Release(ip net.IP) {
	if i, ok := a.index(ip); ok && i != 0 {
		a.addrs.free(i)
	}
}

// Has says whether ip is taken.
func (a *Allocator) Has(ip net.IP) bool {
	i, ok := a.index(ip)
	return ok && a.addrs.has(i)
}

// Free is the number of addresses left.
func (a *Allocator) Free() int { return a.addrs.left() }

func (a *Allocator) index(ip net.IP) (int, bool) {
	if ip == nil || !a.cidr.Contains(ip) || (ip.To4() == nil) != (a.cidr.IP.To4() == nil) {
		return 0, false
	}
	d := new(big.Int).Sub(ipToInt(ip), a.base)
	if d.Sign() < 0 || d.Cmp(big.NewInt(int64(a.addrs.size))) >= 0 {
		return 0, false
	}
	return int(d.Int64()), true
}

func (a *Allocator) ip(i int) net.IP {
	n := new(big.Int).Add(a.base, big.NewInt(int64(i)))
	return intToIP(n, a.cidr.IP.To4() != nil)
}

func ipToInt(ip net.IP) *big.Int {
	if v4 := ip.To4(); v4 != nil {
		return new(big.Int).SetBytes(v4)
	}
	return new(big.Int).SetBytes(ip.To16())
}

func intToIP(n *big.Int, v4 bool) net.IP {
	size := net.IPv6len
	if v4 {
		size = net.IPv4len
	}
	b := n.FillBytes(make([]byte, size))
	return net.IP(b)
}
