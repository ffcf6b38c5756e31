//go:build !linux

package bolt

import "os"

func fdatasync(f *os.File) error {
	return f.Sync()
}

// syncDir is a no-op where directories cannot be synced portably.
func syncDir(string) error { return nil }
