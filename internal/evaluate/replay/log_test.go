package replay

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// writeLargeLog writes n creates of ConfigMaps with size bytes of data
// each, and returns the file's size.
func writeLargeLog(t *testing.T, path string, n, size int) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	data := `{"k":"` + strings.Repeat("x", size) + `"}`
	for i := range n {
		name := fmt.Sprint("cm-", i)
		fmt.Fprintln(w, event(fmt.Sprint("id-", i), "create", name, "", 201, cm(name, team, data), ""))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	return info.Size()
}

// heapInUse is the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestLogHoldsOneEventAtATime: a log of 4000 events of 8 KiB (over 32 MiB)
// is scanned and replayed (read again) holding one event at a time: the
// heap in use after the scan, and during the replay's read (measured
// every 250 events, after a collection), stays within 4 MiB of what it
// was before, where a log held whole takes more than its size.
func TestLogHoldsOneEventAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	size := writeLargeLog(t, path, 4000, 8<<10)
	const bound = 4 << 20
	before := heapInUse()
	l, err := ScanLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if grew := int64(heapInUse()) - int64(before); grew > bound {
		t.Errorf("after the scan of a %d-byte log, the heap grew by %d bytes, want at most %d", size, grew, bound)
	}
	n, peak := 0, int64(0)
	err = l.each(func(*Event) error {
		if n++; n%250 == 0 {
			peak = max(peak, int64(heapInUse())-int64(before))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 4000 || l.Requests != 4000 {
		t.Fatalf("read %d events, the scan counted %d; want 4000", n, l.Requests)
	}
	if peak > bound {
		t.Errorf("reading a %d-byte log, the heap grew by up to %d bytes, want at most %d", size, peak, bound)
	}
	runtime.KeepAlive(l)
}

// TestLogLeavesOutAnIncompleteLastLine: a file's last line cut while it
// was written (no newline, not yet JSON) is left out and named, in the
// scan and in what the replay reads; the same line in the middle of the
// file, or ended by a newline, is an error naming the file and line.
func TestLogLeavesOutAnIncompleteLastLine(t *testing.T) {
	whole := testLog()
	next := event("c8", "create", "d", "", 201, cm("d", team, `{}`), stored("d", team, `{}`))
	cut := next[:len(next)/2]
	l := scanLog(t, whole+cut)
	if got := len(eventsOf(t, l)); got != 7 || l.Requests != 7 {
		t.Errorf("read %d events, the scan counted %d; want the 7 whole ones", got, l.Requests)
	}
	if len(l.Incomplete) != 1 || !strings.HasSuffix(l.Incomplete[0], "audit.log:9") {
		t.Errorf("incomplete lines %v, want [.../audit.log:9]", l.Incomplete)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"middle.log": whole + cut + "\n" + next + "\n", "ended.log": whole + cut + "\n"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ScanLog(path); err == nil || !strings.Contains(err.Error(), name+":9: not an audit event") {
			t.Errorf("%s: %v, want %s:9: not an audit event", name, err, name)
		}
	}
}

// TestReplayReportsAnIncompleteLastLineSkipped: the replay of a log with
// an incomplete last line replays the whole lines and counts it skipped.
func TestReplayReportsAnIncompleteLastLineSkipped(t *testing.T) {
	next := event("c8", "create", "d", "", 201, cm("d", team, `{}`), stored("d", team, `{}`))
	r, err := Run(context.Background(), scanLog(t, testLog()+next[:100]), Options{})
	if err != nil {
		t.Fatal(err)
	}
	incomplete := 0
	for k, n := range r.Skipped {
		if strings.HasPrefix(k, "incomplete last line of a log being written (") && strings.HasSuffix(k, "audit.log:9)") {
			incomplete += n
		}
	}
	if r.Replayed != 6 || len(r.Skipped) != 2 || incomplete != 1 {
		t.Errorf("replayed %d, skipped %v; want 6, the status update and the incomplete line 9", r.Replayed, r.Skipped)
	}
}
