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
// client). The endpoint address is the bind address, or, as kube-apiserver
// without --advertise-address, the host's default-route address when bound
// to every interface or to a loopback address: Endpoints may not hold a
// loopback address (validation refuses it). A host without such an address
// keeps the Service only.
func startKubernetesService(ctx context.Context, p *apiParts, addr net.Addr, log *slog.Logger) error {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || p.clusterIPs == nil {
		return nil
	}
	log = log.With("controller", "kubernetes-service")
	public := tcp.IP
	if public.IsUnspecified() || public.IsLoopback() {
		var err error
		if public, err = utilnet.ResolveBindAddress(tcp.IP); err != nil {
			log.Warn("no host address to advertise: the kubernetes service gets no endpoints", "err", err)
			public = nil
		}
	}
	client, err := controllers.NewClient(p.api.Loopback(apiserverUser))
	if err != nil {
		return err
	}
	c := controllers.NewKubernetesService(client, p.clusterIPs.rng.kubernetesIP, public, tcp.Port, log)
	go c.Run(ctx)
	return nil
}
