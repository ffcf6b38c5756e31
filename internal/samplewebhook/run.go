package samplewebhook

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/admitd/admitd/pkg/webhook"
)

// Options are the settings of `admitd webhook`, upstream's flags.
type Options struct {
	// CertFile and KeyFile are the serving certificate chain and key
	// (--tls-cert-file, --tls-private-key-file). Unlike upstream's, they are
	// reloaded when the files change.
	CertFile, KeyFile string
	// BindAddress is the IP address to listen on (--bind-address). Default
	// (nil): 127.0.0.1, this machine only; 0.0.0.0 or :: listen on every
	// interface, as upstream's webhook in a Pod does.
	BindAddress net.IP
	// Port is the TCP port (--port, upstream's default 443); 0 picks a free
	// one (an admitd addition, for tests).
	Port int
	// SidecarImage is the image /mutating-pods-sidecar injects.
	SidecarImage string
	// Logger receives the server's log. Default (nil): nothing is logged.
	Logger *slog.Logger
}

// Run serves the webhook until ctx is done, then drains the reviews in
// flight for up to 10 seconds. As upstream, it loads the certificate before it
// listens and fails if it cannot; once listening it writes
// `admitd webhook serving on https://<address>` to out.
func Run(ctx context.Context, o Options, out io.Writer) error {
	if _, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile); err != nil {
		return fmt.Errorf("loading the serving certificate: %w", err)
	}
	ln, err := net.Listen("tcp", o.listenAddr())
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(out, "admitd webhook serving on https://%s\n", ln.Addr()); err != nil {
		_ = ln.Close()
		return err
	}
	srv := &webhook.Server{
		CertFile:        o.CertFile,
		KeyFile:         o.KeyFile,
		Handler:         NewHandler(Config{SidecarImage: o.SidecarImage, Logger: o.Logger}),
		ShutdownTimeout: 10 * time.Second,
		Logger:          o.Logger,
	}
	return srv.Serve(ctx, ln)
}

func (o Options) listenAddr() string {
	ip := o.BindAddress
	if ip == nil {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(o.Port))
}
