// Command connflood opens many idle connections to a server and reports,
// every second, how many the server has closed: the client side of
// test/idle-connections.sh.
//
//	connflood -addr 127.0.0.1:6443 -n 10000 -mode keepalive -for 120s
//
// Modes: tcp (connect, send nothing), tls (handshake, send nothing),
// keepalive (one HTTP/1.1 request, then idle as a keep-alive connection).
package main

import (
	"bufio"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6443", "server address")
	n := flag.Int("n", 1000, "connections to open")
	mode := flag.String("mode", "keepalive", "tcp, tls or keepalive")
	hold := flag.Duration("for", time.Minute, "how long to hold them once all are open")
	flag.Parse()
	var opened, closed atomic.Int64
	go func() {
		for {
			time.Sleep(time.Second)
			fmt.Printf("open %d closed %d\n", opened.Load()-closed.Load(), closed.Load())
		}
	}()
	failed := 0
	for range *n {
		conn, err := dial(*addr, *mode)
		if err != nil {
			failed++
			continue
		}
		opened.Add(1)
		go func() {
			_, _ = conn.Read(make([]byte, 1)) // returns when the server closes it
			closed.Add(1)
		}()
	}
	fmt.Printf("opened %d failed %d\n", opened.Load(), failed)
	time.Sleep(*hold)
	fmt.Printf("final open %d closed %d\n", opened.Load()-closed.Load(), closed.Load())
	os.Exit(0)
}

func dial(addr, mode string) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil || mode == "tcp" {
		return conn, err
	}
	tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}) // #nosec: a load tool against a local test server
	if err := tc.Handshake(); err != nil {
		conn.Close()
		return nil, err
	}
	if mode == "tls" {
		return tc, nil
	}
	fmt.Fprintf(tc, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	br := bufio.NewReader(tc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		tc.Close()
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return readerConn{tc, br}, nil
}

// readerConn reads through the buffered reader the response was read with.
type readerConn struct {
	*tls.Conn
	r *bufio.Reader
}

func (c readerConn) Read(p []byte) (int, error) { return c.r.Read(p) }
