// Package serviceip allocates Service cluster IPs from one IPv4 or IPv6
// range (kube-apiserver's --service-cluster-ip-range), as upstream's
// single-range allocator does. It keeps its state in memory: the server
// rebuilds it from the stored Services at start. It is not a ServiceCIDR or
// IPAddress controller, and it does not allocate node ports.
package serviceip

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net"
	"sync"
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
	size int      // usable addresses
	// lower is how many addresses at the start of the range dynamic
	// allocation leaves to explicit requests while others are free.
	lower int

	mu   sync.Mutex
	used map[int]bool
}

// New returns an allocator of cidr ("10.0.0.0/24") with its first address
// reserved.
func New(cidr string) (*Allocator, error) {
	_, ipnet, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("invalid service cluster IP range %q: %w", cidr, err)
	}
	ones, bits := ipnet.Mask.Size()
	total := new(big.Int).Lsh(big.NewInt(1), uint(bits-ones))
	usable := total.Int64() - 1 // the network address
	if ipnet.IP.To4() != nil {
		usable-- // the broadcast address
	}
	if bits-ones > 62 || usable > 1<<20 {
		usable = 1 << 20
	}
	if usable < 2 {
		return nil, fmt.Errorf("service cluster IP range %q is too small", cidr)
	}
	a := &Allocator{cidr: ipnet, base: new(big.Int).Add(ipToInt(ipnet.IP), big.NewInt(1)), size: int(usable),
		lower: min(max(16, int(usable)/16), 256, int(usable)), used: map[int]bool{}}
	a.used[0] = true // the kubernetes Service
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
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.used[i] {
		return ErrAllocated
	}
	a.used[i] = true
	return nil
}

// AllocateNext takes a random free address, preferring those above the
// part of the range left to explicit requests; ErrFull when none is free.
func (a *Allocator) AllocateNext() (net.IP, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i, ok := a.randomFree(a.lower, a.size); ok {
		return a.ip(i), nil
	}
	if i, ok := a.randomFree(0, a.lower); ok {
		return a.ip(i), nil
	}
	return nil, ErrFull
}

// randomFree marks and returns a free index of [from, to), starting the
// scan at a random offset.
func (a *Allocator) randomFree(from, to int) (int, bool) {
	n := to - from
	if n <= 0 {
		return 0, false
	}
	start := rand.IntN(n)
	for k := range n {
		i := from + (start+k)%n
		if !a.used[i] {
			a.used[i] = true
			return i, true
		}
	}
	return 0, false
}

// Release frees ip; an address not taken, or not of the range, is ignored.
func (a *Allocator) Release(ip net.IP) {
	if i, ok := a.index(ip); ok && i != 0 {
		a.mu.Lock()
		delete(a.used, i)
		a.mu.Unlock()
	}
}

// Has says whether ip is taken.
func (a *Allocator) Has(ip net.IP) bool {
	i, ok := a.index(ip)
	if !ok {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.used[i]
}

// Free is the number of addresses left.
func (a *Allocator) Free() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.size - len(a.used)
}

func (a *Allocator) index(ip net.IP) (int, bool) {
	if ip == nil || !a.cidr.Contains(ip) || (ip.To4() == nil) != (a.cidr.IP.To4() == nil) {
		return 0, false
	}
	d := new(big.Int).Sub(ipToInt(ip), a.base)
	if d.Sign() < 0 || d.Cmp(big.NewInt(int64(a.size))) >= 0 {
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
