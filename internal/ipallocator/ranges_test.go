package ipallocator

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

// The range of a CIDR is upstream's: no network address, no IPv4
// broadcast, a lower part of min(max(16, size/16), 256) addresses (none
// for 16 addresses or fewer), and no range for an IPv6 prefix under /64.
func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		cidr, first, last, upper string
		size, offset             uint64
	}{
		{"10.0.0.0/24", "10.0.0.1", "10.0.0.254", "10.0.0.17", 254, 16},
		{"10.96.0.0/28", "10.96.0.1", "10.96.0.14", "10.96.0.1", 14, 0},
		{"10.0.0.0/20", "10.0.0.1", "10.0.15.254", "10.0.1.1", 4094, 256},
		{"10.0.0.0/26", "10.0.0.1", "10.0.0.62", "10.0.0.17", 62, 16},
		{"fd00::/112", "fd00::1", "fd00::ffff", "fd00::101", 65535, 256},
		{"fd00::/64", "fd00::1", "fd00::ffff:ffff:ffff:ffff", "fd00::101", 1<<64 - 1, 256},
		{"10.0.0.0/32", "10.0.0.1", "9.255.255.255", "10.0.0.1", 0, 0}, // empty: last before first
	} {
		r, err := newRange(tc.cidr)
		if err != nil {
			t.Fatalf("newRange(%s): %v", tc.cidr, err)
		}
		if r.first.String() != tc.first || r.last.String() != tc.last || r.upper.String() != tc.upper || r.size != tc.size || r.offset != tc.offset {
			t.Errorf("newRange(%s) = first %s last %s upper %s size %d offset %d, want %s %s %s %d %d", tc.cidr,
				r.first, r.last, r.upper, r.size, r.offset, tc.first, tc.last, tc.upper, tc.size, tc.offset)
		}
	}
	if _, err := newRange("fd00::/48"); err == nil || err.Error() != "shortest allowed prefix length for service CIDR is 64, got 48" {
		t.Errorf("newRange(fd00::/48) = %v, want upstream's refusal", err)
	}
	r, _ := newRange("10.0.0.0/24")
	for ip, want := range map[string]bool{"10.0.0.0": false, "10.0.0.1": true, "10.0.0.254": true, "10.0.0.255": false, "10.0.1.1": false} {
		if got := r.contains(netip.MustParseAddr(ip)); got != want {
			t.Errorf("contains(%s) = %v, want %v", ip, got, want)
		}
	}
}

// Dynamic allocation tries every address of the range once: the upper
// part first, each part from a random address on.
func TestCandidates(t *testing.T) {
	r, _ := newRange("10.0.0.0/26") // 62 addresses, the first 16 lower
	for seed := range uint64(20) {
		seen := map[netip.Addr]bool{}
		i := 0
		for addr := range r.candidates(rand.New(rand.NewPCG(seed, seed))) {
			if seen[addr] || !r.contains(addr) {
				t.Fatalf("seed %d: candidate %s repeated or outside the range", seed, addr)
			}
			seen[addr] = true
			if lower := addr.Compare(r.upper) < 0; lower != (i >= 46) {
				t.Fatalf("seed %d: candidate %d is %s, want the upper part's 46 first", seed, i, addr)
			}
			i++
		}
		if i != 62 {
			t.Fatalf("seed %d: %d candidates, want 62", seed, i)
		}
	}
	small, _ := newRange("10.96.0.0/28")
	n := 0
	for range small.candidates(rand.New(rand.NewPCG(1, 2))) {
		n++
	}
	if n != 14 {
		t.Errorf("candidates of a /28 = %d, want 14", n)
	}
}
