package serviceip

import (
	"math/rand/v2"
	"sync"
)

// pool hands out the indexes [0, size): random ones from [lower, size)
// first, leaving [0, lower) to explicit requests while others are free, as
// upstream's allocation maps with an offset. Safe for concurrent use.
type pool struct {
	size, lower int

	mu   sync.Mutex
	used map[int]bool
}

func newPool(size, lower int) *pool {
	return &pool{size: size, lower: min(lower, size), used: map[int]bool{}}
}

// take marks i; false when it was taken.
func (p *pool) take(i int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.used[i] {
		return false
	}
	p.used[i] = true
	return true
}

// next marks and returns a free index; false when none is free.
func (p *pool) next() (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i, ok := p.randomFree(p.lower, p.size); ok {
		return i, true
	}
	return p.randomFree(0, p.lower)
}

// randomFree marks and returns a free index of [from, to), starting the
// scan at a random offset.
func (p *pool) randomFree(from, to int) (int, bool) {
	n := to - from
	if n <= 0 {
		return 0, false
	}
	start := rand.IntN(n)
	for k := range n {
		i := from + (start+k)%n
		if !p.used[i] {
			p.used[i] = true
			return i, true
		}
	}
	return 0, false
}

func (p *pool) free(i int) {
	p.mu.Lock()
	delete(p.used, i)
	p.mu.Unlock()
}

func (p *pool) has(i int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used[i]
}

func (p *pool) left() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size - len(p.used)
}
