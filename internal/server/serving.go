package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/admitd/admitd/internal/apiserver"
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
	// GoawayChance is --goaway-chance: the probability (at most 0.02) that
	// an HTTP/2 request's answer closes its connection.
	GoawayChance float64
	// ShutdownDelayDuration is --shutdown-delay-duration: how long
	// Shutdown keeps serving after /readyz has begun to fail, for load
	// balancers to notice.
	ShutdownDelayDuration time.Duration
	// ShutdownWatchTerminationGracePeriod is
	// --shutdown-watch-termination-grace-period: how long Shutdown lets
	// watches end on their own once the listener is closed before it ends
	// them; 0 ends them at once.
	ShutdownWatchTerminationGracePeriod time.Duration
	// DisableProfiling is --profiling=false: no /debug/pprof/ (only
	// cluster administrators may read it: RBAC grants the path to no
	// other role).
	DisableProfiling bool
	// DisablePriorityAndFairness is --enable-priority-and-fairness=false:
	// the plain in-flight limits instead of API Priority and Fairness.
	DisablePriorityAndFairness bool
	// MaxRequestsInflight and MaxMutatingRequestsInflight are
	// --max-requests-inflight and --max-mutating-requests-inflight: APF's
	// seats are their sum; without APF, the most read-only and mutating
	// requests served at once. 0 is upstream's default (400, 200); a
	// negative value is no limit (the flag's 0).
	MaxRequestsInflight         int
	MaxMutatingRequestsInflight int
	// maxConnections bounds the open connections (connLimit); 0 derives
	// it from the open file limit.
	maxConnections int
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
// per connection (a connection's window is a stream's times the streams);
// near the open file limit, the longest idle connections are closed
// (connLimit). handshakeErrors counts the failed TLS handshakes.
func newHTTPServer(handler http.Handler, tlsCfg *tls.Config, o ServingOptions, log *slog.Logger, handshakeErrors prometheus.Counter) *http.Server {
	streams := o.HTTP2MaxStreamsPerConnection
	if streams <= 0 {
		streams = defaultHTTP2Streams
	}
	maxConns := o.maxConnections
	if maxConns <= 0 {
		maxConns = connLimitFromFiles(openFileLimit())
	}
	return &http.Server{
		ConnState:         newConnLimit(maxConns).track,
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
		ErrorLog: httpErrorLog(log, handshakeErrors),
	}
}

// Shutdown stops the server as kube-apiserver stops on SIGTERM: /readyz
// fails at once while requests are still served for ShutdownDelayDuration;
// then the listener closes, requests in flight finish (within the request
// timeout), watches and other streams end (after
// ShutdownWatchTerminationGracePeriod, when set, if they have not ended on
// their own), and the server closes as Close does.
func (s *Server) Shutdown() error {
	s.api.BeginShutdown()
	if s.stopIdentityLease != nil { // upstream's pre-shutdown hook
		s.stopIdentityLease()
	}
	time.Sleep(s.serving.ShutdownDelayDuration)
	go s.endStreams(s.serving.ShutdownWatchTerminationGracePeriod)
	ctx, cancel := context.WithTimeout(context.Background(), s.serving.requestTimeout()+s.serving.ShutdownWatchTerminationGracePeriod)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("requests still in flight at the end of the shutdown timeout are cut off")
		err = nil
	}
	return errors.Join(err, s.Close())
}

// endStreams waits up to grace for the long-running requests in flight to
// end on their own, then ends those left.
func (s *Server) endStreams(grace time.Duration) {
	deadline := time.Now().Add(grace)
	for s.api.ActiveStreams() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	s.api.EndStreams()
}

func (o ServingOptions) requestTimeout() time.Duration {
	if o.RequestTimeout > 0 {
		return o.RequestTimeout
	}
	return apiserver.DefaultRequestTimeout
}
