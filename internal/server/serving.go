package server

import (
	"crypto/tls"
	"math"
	"log/slog"
	"net/http"
	"time"
)

// ServingOptions are kube-apiserver's flags for connections and request
// lifetimes.
type ServingOptions struct {
	// RequestTimeout is --request-timeout: the most a request that is not
	// long-running may take (default 1m).
	RequestTimeout time.Duration
	// MinRequestTimeout is --min-request-timeout: a watch without
	// timeoutSeconds ends at random between it and twice it (default
	// 1800s).
	MinRequestTimeout time.Duration
	// HTTP2MaxStreamsPerConnection is --http2-max-streams-per-connection;
	// 0 is upstream's 100.
	HTTP2MaxStreamsPerConnection int
}

// Connection limits of kube-apiserver's secure serving
// (k8s.io/apiserver's SecureServingInfo.Serve).
const (
	// maxHeaderBytes bounds a request's header block.
	maxHeaderBytes = 1 << 20
	// idleTimeout closes a keep-alive connection with no request in
	// flight, HTTP/1 or HTTP/2 (as http.DefaultTransport's idle timeout).
	idleTimeout = 90 * time.Second
	// readHeaderTimeout bounds reading a request's headers (just under
	// the longest request timeout a client asks for by default).
	readHeaderTimeout = 32 * time.Second
	// http2FrameBytes is the most an HTTP/2 client may send in one frame
	// and have unacknowledged on one stream: 256 KiB holds 99% of the
	// objects upstream surveyed.
	http2FrameBytes = 256 << 10
	// defaultHTTP2Streams is the concurrent streams a client may open on
	// one connection unless --http2-max-streams-per-connection says.
	defaultHTTP2Streams = 100
	// maxHTTP2ConnectionWindow is the largest flow-control window HTTP/2
	// has.
	maxHTTP2ConnectionWindow = math.MaxInt32
)

// newHTTPServer is the HTTPS server of handler with kube-apiserver's
// connection limits: header size and read time, idle connections closed
// after 90 s, and HTTP/2 streams, frames and flow-control windows bounded
// per connection (a connection's window is a stream's times the streams).
func newHTTPServer(handler http.Handler, tlsCfg *tls.Config, o ServingOptions, log *slog.Logger) *http.Server {
	streams := o.HTTP2MaxStreamsPerConnection
	if streams <= 0 {
		streams = defaultHTTP2Streams
	}
	return &http.Server{
		Handler:           handler,
		TLSConfig:         tlsCfg,
		MaxHeaderBytes:    maxHeaderBytes,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          streams,
			MaxReadFrameSize:              http2FrameBytes,
			MaxReceiveBufferPerStream:     http2FrameBytes,
			MaxReceiveBufferPerConnection: min(http2FrameBytes*streams, maxHTTP2ConnectionWindow),
		},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}
