package serviceip

import (
	"errors"
	"net"
	"testing"
)

func TestAllocateNextFillsTheRange(t *testing.T) {
	a, err := New("127.1.0.0/28") // 14 usable, the first reserved
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{a.Reserved().String(): true}
	for range 13 {
		ip, err := a.AllocateNext()
		if err != nil {
			t.Fatalf("AllocateNext() error %v with %d free", err, a.Free())
		}
		if seen[ip.String()] || !a.cidr.Contains(ip) || ip.String() == "127.1.0.15" {
			t.Fatalf("AllocateNext() = %v: taken, reserved, broadcast or out of range", ip)
		}
		seen[ip.String()] = true
	}
	if _, err := a.AllocateNext(); !errors.Is(err, ErrFull) || err.Error() != "range is full" {
		t.Fatalf("AllocateNext() on a full range = %v, want %q", err, "range is full")
	}
	a.Release(net.ParseIP("127.1.0.7"))
	if ip, err := a.AllocateNext(); err != nil || ip.String() != "127.1.0.7" {
		t.Fatalf("AllocateNext() after a release = %v, %v; want 127.1.0.7", ip, err)
	}
}

func TestAllocateNextPrefersTheUpperRange(t *testing.T) {
	a, _ := New("10.0.0.0/24")
	for range 100 {
		ip, err := a.AllocateNext()
		if err != nil {
			t.Fatal(err)
		}
		if ip.To4()[3] <= 16 {
			t.Fatalf("AllocateNext() = %v, want above the 16 addresses left to explicit requests", ip)
		}
	}
}

func TestAllocate(t *testing.T) {
	a, _ := New("127.1.0.0/24")
	for _, tc := range []struct {
		ip, want string
	}{
		{"127.1.0.10", ""},
		{"127.1.0.10", "provided IP is already allocated"},
		{"127.1.0.1", "provided IP is already allocated"}, // the kubernetes Service's
		{"127.1.0.0", "the provided IP (127.1.0.0) is not in the valid range. The range of valid IPs is 127.1.0.0/24"},
		{"127.1.0.255", "the provided IP (127.1.0.255) is not in the valid range. The range of valid IPs is 127.1.0.0/24"},
		{"10.0.0.5", "the provided IP (10.0.0.5) is not in the valid range. The range of valid IPs is 127.1.0.0/24"},
		{"127.1.0.254", ""},
	} {
		err := a.Allocate(net.ParseIP(tc.ip))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Allocate(%s) = %q, want %q", tc.ip, got, tc.want)
		}
	}
	a.Release(net.ParseIP("127.1.0.10"))
	if a.Has(net.ParseIP("127.1.0.10")) {
		t.Errorf("Has(127.1.0.10) after Release = true, want false")
	}
	a.Release(a.Reserved())
	if !a.Has(a.Reserved()) {
		t.Errorf("Release freed the kubernetes Service's address")
	}
}

func TestIPv6(t *testing.T) {
	a, err := New("fd00::/120")
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Reserved().String(); got != "fd00::1" {
		t.Errorf("Reserved() = %s, want fd00::1", got)
	}
	if err := a.Allocate(net.ParseIP("fd00::ff")); err != nil {
		t.Errorf("Allocate(fd00::ff) = %v, want nil (IPv6 has no broadcast address)", err)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, cidr := range []string{"", "10.0.0.0", "10.0.0.0/32", "10.0.0.0/31"} {
		if _, err := New(cidr); err == nil {
			t.Errorf("New(%q) = nil error, want one", cidr)
		}
	}
}
