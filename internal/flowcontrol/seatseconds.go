package flowcontrol

import (
	"fmt"
	"math"
	"time"
)

// seatSeconds is work and virtual time in hundred-millionths of a
// seat-second, as upstream's fair queuing counts them: integers, so that
// equal work compares equal however it was summed (floats would break
// ties between queues differently), and so that each advance of virtual
// time is rounded as upstream rounds it. Arithmetic wraps around, as
// upstream's; a negative charge is added as its two's complement.
type seatSeconds uint64

// seatSecondScale is seatSeconds per seat-second.
const seatSecondScale = 1e8

// seatsFor is seats held for d, rounded to the nearest unit.
func seatsFor(seats float64, d time.Duration) seatSeconds {
	return seatSeconds(int64(math.Round(seats * float64(d) / (float64(time.Second) / seatSecondScale))))
}

// perSeat is how long seats take to do w.
func (w seatSeconds) perSeat(seats float64) time.Duration {
	return time.Duration(float64(w) / seats * (float64(time.Second) / seatSecondScale))
}

// String is w as upstream's debug dumps show it: seat-seconds with eight
// decimals.
func (w seatSeconds) String() string {
	whole := w / seatSecondScale
	return fmt.Sprintf("%d.%08dss", whole, w-whole*seatSecondScale)
}
