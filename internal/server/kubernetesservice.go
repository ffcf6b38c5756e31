package server

import (
	"context"
	"log/slog"
	"net"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/admitd/admitd/internal/controllers"
)

// startKubernetesService keeps the default/kubernetes Service, its
// Endpoints and EndpointSlice for the server listening on addr, writing as
// the API server itself (with admission, as kube-apiserver's loopback
// client). The endpoint address is the bind address, where the server can
// be reached, or the host's default-route address when bound to every
// interface. (kube-apiserver without --advertise-address picks the host's
// address for a loopback bind address too, which admitd does not serve.)
func startKubernetesService(ctx context.Context, p *apiParts, addr net.Addr, log *slog.Logger) error {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || p.clusterIPs == nil {
		return nil
	}
	public := tcp.IP
	if public.IsUnspecified() {
		var err error
		if public, err = utilnet.ResolveBindAddress(tcp.IP); err != nil {
			return err
		}
	}
	client, err := controllers.NewClient(p.api.Loopback(apiserverUser))
	if err != nil {
		return err
	}
	c := controllers.NewKubernetesService(client, p.clusterIPs.rng.kubernetesIP, public, tcp.Port, log.With("controller", "kubernetes-service"))
	go c.Run(ctx)
	return nil
}
