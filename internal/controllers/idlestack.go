package controllers

// The Go runtime starts each new goroutine with a stack the size of the
// average stack in use by the goroutines its last garbage collection
// scanned (rounded up to a power of two; GODEBUG adaptivestackstart).
// Most of this process's goroutines are controller workers parked in
// their queue's Get, each using well under 1 KiB; with ~90 of them the
// average stays below the 2 KiB bound, and every goroutine the serving
// path starts (HTTP/2's handler and frame writers, two or three per
// request) begins at 2 KiB and copies its stack once or twice as it
// grows. Parking the workers with a reserve on their stacks lifts the
// average over it: new goroutines begin at 4 KiB (a reserve of 512 B
// already does; 1 KiB leaves room for more goroutines). Measured with
// BenchmarkCreateConfigMap_8RawClients/bolt (8 alternating rounds, a
// 1.5 KiB reserve, the same 4 KiB start): 214.5 → 199.0 µs of CPU per
// create (−7%, p=0.04); the built binary under loadgen with this 1 KiB
// reserve: 211 → 190 µs (8 rounds). The workers' stacks grow to 4 KiB
// once (~180 KiB in all).

// idleStackReserve is what a parked worker keeps on its stack.
const idleStackReserve = 1024

// parkWithReserve runs loop, a worker's loop, below a frame of
// idleStackReserve bytes.
//
//go:noinline
func parkWithReserve(loop func()) {
	var reserve [idleStackReserve]byte
	loop()
	touchReserve(&reserve)
}

// touchReserve keeps the reserve on the stack: it is used after the loop,
// and its address does not escape.
//
//go:noinline
func touchReserve(r *[idleStackReserve]byte) { r[0]++ }
