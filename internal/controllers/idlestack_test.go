package controllers

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
)

// startingStackSize is the size the runtime gives new goroutines after a
// collection with parked goroutines, each parked by park.
func startingStackSize(t *testing.T, parked int, park func(loop func())) uint64 {
	t.Helper()
	release := make(chan struct{})
	var started, done sync.WaitGroup
	for range parked {
		started.Add(1)
		done.Go(func() { park(func() { started.Done(); <-release }) })
	}
	started.Wait()
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/stack/starting-size:bytes"}}
	metrics.Read(sample)
	close(release)
	done.Wait()
	if sample[0].Value.Kind() != metrics.KindUint64 {
		t.Skip("this Go runtime does not report its starting stack size")
	}
	return sample[0].Value.Uint64()
}

// Many workers parked as controllers park theirs lift the runtime's
// starting stack size to 4 KiB; parked plainly they keep it at 2 KiB
// (which shows the measure moves, and fails if a compiler keeps the
// reserve off the stack or the runtime stops averaging).
func TestParkedWorkersLiftTheStartingStackSize(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's stacks are deeper: the plain average is over 2 KiB already")
	}
	const parked = 300
	plain := startingStackSize(t, parked, func(loop func()) { loop() })
	reserved := startingStackSize(t, parked, parkWithReserve)
	if plain != 2048 || reserved < 4096 {
		t.Errorf("starting stack size after %d parked workers: plain %d, with the reserve %d; want 2048 and at least 4096", parked, plain, reserved)
	}
}
