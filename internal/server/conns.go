package server

import (
	idlelist "container/list"
	"net"
	"net/http"
	"sync"
	"syscall"
)

// connLimit keeps the server's open connections under a bound so that a
// client holding thousands of idle connections cannot use up the
// process's file descriptors (every later client, and every webhook call
// and storage connection, would then fail): when a new connection would
// pass the bound, the connection idle longest — no request in flight, or
// none yet — is closed. Connections with requests in flight are never
// closed; if all of them are busy, the new one is. kube-apiserver has no
// such bound (it relies on its idle timeout); this one only acts near the
// file limit.
type connLimit struct {
	max int

	mu   sync.Mutex
	open int
	// idle holds the idle connections, longest idle first; conns finds a
	// connection's element in it (nil when it is active).
	idle  *idlelist.List
	conns map[net.Conn]*idlelist.Element
}

func newConnLimit(max int) *connLimit {
	return &connLimit{max: max, idle: idlelist.New(), conns: map[net.Conn]*idlelist.Element{}}
}

// connLimitFromFiles is the bound for a process allowed files open
// files: all but a tenth of them (at least 64), left for storage,
// webhooks, logs and the listener; 0 (unknown) is no bound.
func connLimitFromFiles(files uint64) int {
	if files == 0 {
		return 1 << 30 // unknown: no bound
	}
	reserve := max(files/10, 64)
	if files <= reserve {
		return 1
	}
	return int(min(files-reserve, 1<<30))
}

// openFileLimit is the process's limit on open files (Go raises the soft
// limit to the hard one at start), or 0 when it cannot be read.
func openFileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return l.Cur
}

// track is an http.Server ConnState hook.
func (c *connLimit) track(conn net.Conn, state http.ConnState) {
	var evict net.Conn
	c.mu.Lock()
	switch state {
	case http.StateNew:
		c.open++
		c.conns[conn] = c.idle.PushBack(conn)
		if c.open > c.max {
			evict = c.idle.Front().Value.(net.Conn) // conn itself when no other is idle
			c.forget(evict)
		}
	case http.StateActive:
		if e := c.conns[conn]; e != nil {
			c.idle.Remove(e)
			c.conns[conn] = nil
		}
	case http.StateIdle:
		if e, ok := c.conns[conn]; ok && e == nil {
			c.conns[conn] = c.idle.PushBack(conn)
		}
	case http.StateHijacked, http.StateClosed:
		c.forget(conn)
	}
	c.mu.Unlock()
	if evict != nil {
		_ = evict.Close()
	}
}

// forget stops counting conn (its StateClosed, if it comes after, finds
// nothing). c.mu is held.
func (c *connLimit) forget(conn net.Conn) {
	e, ok := c.conns[conn]
	if !ok {
		return
	}
	if e != nil {
		c.idle.Remove(e)
	}
	delete(c.conns, conn)
	c.open--
}

// counts are the open and idle connections, for tests.
func (c *connLimit) counts() (open, idle int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open, c.idle.Len()
}
