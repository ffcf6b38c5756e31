package bolt

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data and the metadata needed to read it back, as
// bbolt does on Linux.
func fdatasync(f *os.File) error {
	return syscall.Fdatasync(int(f.Fd()))
}

// syncDir makes the entries of directory dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
