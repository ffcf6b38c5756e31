// Package serviceip allocates Service node ports from one port range
// (kube-apiserver's --service-node-port-range), as upstream's port
// allocator does. It keeps its state in memory: the server rebuilds it
// from the stored Services at start. Cluster IPs are IPAddress objects
// (internal/ipallocator); it knows nothing of Services themselves.
package serviceip

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DefaultNodePortRange is kube-apiserver's default --service-node-port-range.
const DefaultNodePortRange = "30000-32767"

// Errors of Allocate and AllocateNext, worded as upstream's.
var (
	// ErrFull: no free port is left.
	ErrFull = errors.New("range is full")
	// ErrPortAllocated: the requested node port is taken.
	ErrPortAllocated = errors.New("provided port is already allocated")
)

// PortNotInRangeError is the refusal of a node port outside the range.
type PortNotInRangeError struct{ ValidPorts string }

func (e *PortNotInRangeError) Error() string {
	return fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", e.ValidPorts)
}

// PortAllocator hands out the node ports of one range. Safe for
// concurrent use.
type PortAllocator struct {
	base  int
	spec  string
	ports *pool
}

// NewPorts returns an allocator of a "first-last" range ("30000-32767";
// a single port or "first+count" as upstream's flag are accepted too).
func NewPorts(spec string) (*PortAllocator, error) {
	first, last, err := parsePortRange(spec)
	if err != nil {
		return nil, fmt.Errorf("invalid service node port range %q: %w", spec, err)
	}
	size := last - first + 1
	return &PortAllocator{base: first, spec: fmt.Sprintf("%d-%d", first, last),
		ports: newPool(size, min(max(16, size/32), 128))}, nil
}

func parsePortRange(spec string) (first, last int, err error) {
	s := strings.TrimSpace(spec)
	lo, hi, dash := strings.Cut(s, "-")
	if !dash {
		var plus bool
		lo, hi, plus = strings.Cut(s, "+")
		if plus {
			f, e1 := strconv.Atoi(lo)
			n, e2 := strconv.Atoi(hi)
			if e1 != nil || e2 != nil || n < 0 {
				return 0, 0, errors.New("want first-last")
			}
			lo, hi = strconv.Itoa(f), strconv.Itoa(f+n)
		} else {
			hi = lo
		}
	}
	first, e1 := strconv.Atoi(lo)
	last, e2 := strconv.Atoi(hi)
	if e1 != nil || e2 != nil || first < 1 || last > 65535 || last < first {
		return 0, 0, errors.New("want first-last with 0 < first <= last <= 65535")
	}
	return first, last, nil
}

// Range is the range in upstream's form ("30000-32767").
func (p *PortAllocator) Range() string { return p.spec }

// Allocate takes port: ErrPortAllocated when taken, a *PortNotInRangeError
// outside the range.
func (p *PortAllocator) Allocate(port int) error {
	i := port - p.base
	if i < 0 || i >= p.ports.size {
		return &PortNotInRangeError{ValidPorts: p.spec}
	}
	if !p.ports.take(i) {
		return ErrPortAllocated
	}
	return nil
}

// AllocateNext takes a random free port; ErrFull when none is left.
func (p *PortAllocator) AllocateNext() (int, error) {
	i, ok := p.ports.next()
	if !ok {
		return 0, ErrFull
	}
	return p.base + i, nil
}

// Release frees port; a port not taken or out of range is ignored.
func (p *PortAllocator) Release(port int) {
	if i := port - p.base; i >= 0 && i < p.ports.size {
		p.ports.free(i)
	}
}

// Has says whether port is taken.
func (p *PortAllocator) Has(port int) bool {
	i := port - p.base
	return i >= 0 && i < p.ports.size && p.ports.has(i)
}
