package replay

import (
	"bufio"
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
