//go:build !unix

package harness

// lockFile: without flock, concurrent test binaries each build their own
// kubectl; buildKubectl's rename keeps the result whole.
func lockFile(string) (unlock func(), err error) { return func() {}, nil }
