package startup

import (
	"runtime/debug"
	"testing"
)

func TestPauseGCThenResume(t *testing.T) {
	before := debug.SetGCPercent(50)
	defer debug.SetGCPercent(before)
	limit := debug.SetMemoryLimit(-1)
	PauseGC()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("GC percent while paused = %d, want -1 (off)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != pausedHeapLimit {
		t.Errorf("memory limit while paused = %d, want %d", got, pausedHeapLimit)
	}
	Resume()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("GC percent after Resume = %d, want 50", got)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("memory limit after Resume = %d, want %d", got, limit)
	}
	Resume() // a second call changes nothing
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("GC percent after a second Resume = %d, want 50", got)
	}
}
