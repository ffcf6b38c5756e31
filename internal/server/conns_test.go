package server

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestConnLimitFromFiles(t *testing.T) {
	for files, want := range map[uint64]int{0: 1 << 30, 20000: 18000, 1024: 922, 100: 36, 64: 1, 1 << 62: 1 << 30} {
		if got := connLimitFromFiles(files); got != want {
			t.Errorf("connLimitFromFiles(%d) = %d, want %d", files, got, want)
		}
	}
}

// Past the bound, a new connection closes the connection idle longest;
// busy ones are kept, and when none is idle the new one is closed.
func TestConnLimitEvictsTheLongestIdle(t *testing.T) {
	c := newConnLimit(2)
	a, b, n := pipeConn(t), pipeConn(t), pipeConn(t)
	c.track(a, http.StateNew)
	c.track(b, http.StateNew)
	c.track(a, http.StateActive)
	c.track(a, http.StateIdle) // a is now idle more recently than b
	c.track(n, http.StateNew)
	if !closed(b) || closed(a) || closed(n) {
		t.Errorf("closed a, b, n = %v, %v, %v; want only b (idle longest)", closed(a), closed(b), closed(n))
	}
	c.track(b, http.StateClosed) // net/http reports the close; nothing is counted twice
	if open, idle := c.counts(); open != 2 || idle != 2 {
		t.Errorf("counts = %d open, %d idle; want 2, 2", open, idle)
	}
	c.track(a, http.StateActive)
	c.track(n, http.StateActive)
	late := pipeConn(t)
	c.track(late, http.StateNew)
	if !closed(late) || closed(a) || closed(n) {
		t.Errorf("with every connection busy: closed a, n, late = %v, %v, %v; want only late", closed(a), closed(n), closed(late))
	}
	if open, _ := c.counts(); open != 2 {
		t.Errorf("open = %d, want 2", open)
	}
}

// A server at its connection bound still serves a new client: idle
// connections (TLS done, no request) are closed to make room.
func TestServerClosesIdleConnectionsAtItsBound(t *testing.T) {
	o := testOptions(t)
	o.Serving.maxConnections = 5
	s, _ := startWith(t, o)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	cfg := &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}
	addr := strings.TrimPrefix(s.URL, "https://")
	var idle []*tls.Conn
	for range 20 {
		conn, err := tls.Dial("tcp", addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		idle = append(idle, conn)
	}
	for range 3 {
		conn, err := tls.Dial("tcp", addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("a new client at the bound: %v %v, want 200", resp, err)
		}
		conn.Close()
	}
	open := 0
	for _, conn := range idle {
		_ = conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := conn.Read(make([]byte, 1)); err != nil && isTimeout(err) {
			open++
		}
	}
	if open > 5 {
		t.Errorf("%d of 20 idle connections still open, want at most 5", open)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// pipeConn is one end of a pipe, closed with the test.
func pipeConn(t *testing.T) net.Conn {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return a
}

// closed reports whether conn was closed.
func closed(conn net.Conn) bool {
	_ = conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err := conn.Read(make([]byte, 1))
	return err != nil && !isTimeout(err)
}
