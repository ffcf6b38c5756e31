package servicecidrs

import (
	"net/netip"
	"testing"
)

func TestHoldsAddress(t *testing.T) {
	for _, c := range []struct {
		prefix, addr string
		want         bool
	}{
		{"10.0.0.0/24", "10.0.0.1", true},
		{"10.0.0.0/24", "10.0.0.254", true},
		{"10.0.0.0/24", "10.0.0.0", false},   // the network address
		{"10.0.0.0/24", "10.0.0.255", false}, // the broadcast address
		{"10.0.0.0/24", "10.0.1.1", false},
		{"10.0.0.0/20", "10.0.15.255", false},
		{"10.0.0.0/20", "10.0.15.254", true},
		{"10.0.0.0/20", "10.0.16.1", false},
		{"fd00::/64", "fd00::", false},
		{"fd00::/64", "fd00::ffff:ffff:ffff:ffff", true}, // IPv6 has no broadcast
		{"fd00::/64", "10.0.0.1", false},
	} {
		if got := holdsAddress(netip.MustParsePrefix(c.prefix), netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("holdsAddress(%s, %s) = %v, want %v", c.prefix, c.addr, got, c.want)
		}
	}
}

func TestContainsPrefix(t *testing.T) {
	for _, c := range []struct {
		outer, inner string
		want         bool
	}{
		{"10.0.0.0/24", "10.0.0.0/24", true},
		{"10.0.0.0/16", "10.0.3.0/24", true},
		{"10.0.3.0/24", "10.0.0.0/16", false},
		{"10.1.0.0/16", "10.0.0.0/24", false},
		{"fd00::/48", "fd00::/64", true},
	} {
		if got := containsPrefix(netip.MustParsePrefix(c.outer), netip.MustParsePrefix(c.inner)); got != c.want {
			t.Errorf("containsPrefix(%s, %s) = %v, want %v", c.outer, c.inner, got, c.want)
		}
	}
}
