package registry

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use rather than when the package is
// initialized: validation's patterns cost every command of the binary
// (admitd version included) half a millisecond at start otherwise.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
