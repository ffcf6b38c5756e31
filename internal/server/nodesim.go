package server

import (
	"context"
	"time"

	"github.com/admitd/admitd/internal/nodesim"
	"github.com/admitd/admitd/pkg/storage"
)

// SimulatedNodesOptions turn on simulated nodes (internal/nodesim): a
// simulated kubelet for every Node annotated kwok.x-k8s.io/node=fake and a
// scheduler binding pending pods to them. Off by default.
type SimulatedNodesOptions struct {
	// Enabled runs the simulator (`admitd serve --simulated-nodes=N`,
	// N >= 0).
	Enabled bool
	// Nodes is how many nodes to register at start: node-0 ... node-N-1.
	Nodes int
	// LeaseRenewInterval is how often each node's Lease is renewed;
	// 0: the kubelet's 10s.
	LeaseRenewInterval time.Duration
}

// registerSimulatedNodes makes the simulator, when enabled, and registers
// its nodes: before the server serves (without leader election), so that
// `kubectl wait node/node-0` right after start finds them. runSimulatedNodes
// runs it, with the controllers, on the elected instance only.
func registerSimulatedNodes(ctx context.Context, p *apiParts, store storage.Store, o Options) (*nodesim.Simulator, error) {
	if !o.SimulatedNodes.Enabled {
		return nil, nil
	}
	sim, err := nodesim.New(nodesim.Config{Store: store, Catalogue: p.cat, Loopback: p.api.Loopback,
		Nodes: o.SimulatedNodes.Nodes, LeaseRenewInterval: o.SimulatedNodes.LeaseRenewInterval,
		Log: o.Logger.With("component", "nodesim")})
	if err != nil {
		return nil, err
	}
	sim.RegisterNodes(ctx)
	return sim, nil
}
