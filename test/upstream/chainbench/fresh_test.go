package chainbench

import "testing"

// copiesPerPause is how many fresh pods admitEach makes while the timer is
// stopped: enough that pausing costs nothing measurable, few enough that
// the copies waiting their turn add little to the heap the collector scans.
const copiesPerPause = 256

// admitEach times admit alone on a fresh copy of in per iteration. A
// server admits the object it has just decoded from the request, so the
// copy each iteration needs is made outside the timer, in batches (its
// allocations are not counted either); BenchmarkEachPlugin's copy/*
// measures it on its own.
func admitEach[P any](b *testing.B, in P, copyOf func(P) P, admit func(P) error) {
	b.Helper()
	var fresh []P
	b.ReportAllocs()
	for b.Loop() {
		if len(fresh) == 0 {
			b.StopTimer()
			fresh = make([]P, copiesPerPause)
			for i := range fresh {
				fresh[i] = copyOf(in)
			}
			b.StartTimer()
		}
		p := fresh[len(fresh)-1]
		fresh = fresh[:len(fresh)-1]
		if err := admit(p); err != nil {
			b.Fatal(err)
		}
	}
}
