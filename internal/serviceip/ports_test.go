package serviceip

import (
	"errors"
	"testing"
)

func TestPortAllocator(t *testing.T) {
	p, err := NewPorts("30000-30003")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		port int
		want string
	}{
		{30001, ""},
		{30001, "provided port is already allocated"},
		{29999, "provided port is not in the valid range. The range of valid ports is 30000-30003"},
		{30004, "provided port is not in the valid range. The range of valid ports is 30000-30003"},
	} {
		got := ""
		if err := p.Allocate(tc.port); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Allocate(%d) = %q, want %q", tc.port, got, tc.want)
		}
	}
	seen := map[int]bool{30001: true}
	for range 3 {
		port, err := p.AllocateNext()
		if err != nil || seen[port] || port < 30000 || port > 30003 {
			t.Fatalf("AllocateNext() = %d, %v; want a free port of the range", port, err)
		}
		seen[port] = true
	}
	if _, err := p.AllocateNext(); !errors.Is(err, ErrFull) {
		t.Fatalf("AllocateNext() on a full range = %v, want %v", err, ErrFull)
	}
	p.Release(30001)
	if p.Has(30001) {
		t.Errorf("Has(30001) after Release = true")
	}
}

func TestNewPorts(t *testing.T) {
	for spec, want := range map[string]string{"30000-32767": "30000-32767", "30000+10": "30000-30010", "8080": "8080-8080", "": "", "5-1": "", "1-70000": ""} {
		p, err := NewPorts(spec)
		got := ""
		if err == nil {
			got = p.Range()
		}
		if got != want {
			t.Errorf("NewPorts(%q) range %q (err %v), want %q", spec, got, err, want)
		}
	}
}
