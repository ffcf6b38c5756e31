package apiserver

// growStack makes the calling goroutine's stack at least about 64 KiB in a
// single step, while it is still shallow and cheap to copy.
//
// A write request walks its object several times through recursive code
// (structured-merge-diff for managedFields, JSON codecs). On a fresh HTTP/2
// handler goroutine, that recursion would otherwise double the stack from
// 8 KiB several times, copying it each time, deep inside the walk.
//
//go:noinline
func growStack() byte {
	var frame [64 << 10]byte
	return touch(frame[:])
}

//go:noinline
func touch(b []byte) byte { return b[len(b)-1] }
