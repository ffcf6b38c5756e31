package server

import (
	"bytes"
	"io"
	"log"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
)

// newTLSHandshakeErrors registers kube-apiserver's
// apiserver_tls_handshake_errors_total on reg.
func newTLSHandshakeErrors(reg prometheus.Registerer) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "apiserver_tls_handshake_errors_total",
		Help: "[ALPHA] Number of requests dropped with 'TLS handshake error from' error"})
	reg.MustRegister(c)
	return c
}

// httpErrorLog is net/http's error log of the server: every line logged
// at debug, those of a failed TLS handshake counted in handshakeErrors
// (nil: not counted), as upstream counts what net/http logs.
func httpErrorLog(logger *slog.Logger, handshakeErrors prometheus.Counter) *log.Logger {
	out := slog.NewLogLogger(logger.Handler(), slog.LevelDebug)
	if handshakeErrors == nil {
		return out
	}
	return log.New(handshakeErrorCounter{next: out.Writer(), count: handshakeErrors}, "", 0)
}

// tlsHandshakeError starts the line net/http logs when a handshake fails.
var tlsHandshakeError = []byte("http: TLS handshake error from")

type handshakeErrorCounter struct {
	next  io.Writer
	count prometheus.Counter
}

func (w handshakeErrorCounter) Write(p []byte) (int, error) {
	if bytes.Contains(p, tlsHandshakeError) {
		w.count.Inc()
	}
	return w.next.Write(p)
}
