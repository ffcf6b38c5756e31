package server

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strconv"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/admitd/admitd/internal/controllers"
)

// startIdentityControllers runs what kube-apiserver 1.37.2's post-start
// hooks start-kube-apiserver-identity-lease-controller,
// start-kube-apiserver-identity-lease-garbage-collector (with
// APIServerIdentity) and start-legacy-token-tracking-controller run, until
// ctx ends: the lease of an earlier run is deleted, then this run's
// written, beside the server's start (upstream deletes the old one before
// its hook passes). The returned func deletes this run's lease on a
// graceful shutdown (nil without APIServerIdentity).
func startIdentityControllers(ctx context.Context, p *apiParts, addr net.Addr, o Options, log *slog.Logger) (stopLease func(), err error) {
	tracking, err := controllers.NewLegacyTokenTracking(p.store, p.api.Loopback(apiserverUser), log.With("controller", "legacy-token-tracking"))
	if err != nil {
		return nil, err
	}
	go tracking.Run(ctx)
	gates := p.adm.gates
	if !gates.Enabled("APIServerIdentity") {
		return nil, nil
	}
	hostname, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	peer := ""
	if gates.Enabled("UnknownVersionInteroperabilityProxy") {
		peer = peerAddress(addr)
	}
	lease, err := controllers.NewIdentityLease(p.api.Loopback(apiserverUser), controllers.APIServerID(hostname), hostname, peer,
		log.With("controller", "apiserver-identity-lease"))
	if err != nil {
		return nil, err
	}
	gc, err := controllers.NewIdentityLeaseGC(p.api.Loopback(apiserverUser), log.With("controller", "apiserver-identity-lease-gc"))
	if err != nil {
		return nil, err
	}
	go func() { // off the path to ready: the old lease goes first, then this run's is written
		lease.Start(ctx)
		lease.Run(ctx)
	}()
	go gc.Run(ctx)
	return func() { lease.Stop(context.Background()) }, nil
}

// peerAddress is where peers reach this server, as upstream announces it
// without --peer-advertise-ip: the public address (the bind address, or the
// host's default-route address when bound to every interface) and the
// secure port.
func peerAddress(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return ""
	}
	public := tcp.IP
	if public.IsUnspecified() {
		var err error
		if public, err = utilnet.ResolveBindAddress(tcp.IP); err != nil {
			return ""
		}
	}
	return net.JoinHostPort(public.String(), strconv.Itoa(tcp.Port))
}
