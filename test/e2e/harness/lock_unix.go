//go:build unix

package harness

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockFile takes an exclusive flock on path, creating it and its directory,
// and returns what releases it. Other processes wait; the kernel releases it
// when the process dies.
func lockFile(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
