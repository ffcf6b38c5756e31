package hpa

import "testing"

// A reconciliation waits until the cache has seen the last status write.
func TestConsistencyWaitsForTheCache(t *testing.T) {
	seen := int64(10)
	cs := consistency{seen: func() int64 { return seen }, pending: map[string]int64{}}
	cs.wrote("ns/a", "12")
	cs.wrote("ns/a", "11")
	if err := cs.ensureCaughtUp("ns/a"); err == nil {
		t.Fatal("the cache at 10 passed for a write at 12")
	}
	if err := cs.ensureCaughtUp("ns/b"); err != nil {
		t.Fatalf("an autoscaler never written waits: %v", err)
	}
	seen = 12
	if err := cs.ensureCaughtUp("ns/a"); err != nil {
		t.Fatalf("the cache at 12: %v", err)
	}
	cs.wrote("ns/a", "20")
	cs.forget("ns/a")
	if err := cs.ensureCaughtUp("ns/a"); err != nil {
		t.Fatalf("after forget: %v", err)
	}
}
