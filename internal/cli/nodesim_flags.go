package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/server"
)

// addSimulatedNodeFlags registers --simulated-nodes.
func addSimulatedNodeFlags(fs *pflag.FlagSet, o *server.SimulatedNodesOptions) {
	fs.Var((*simulatedNodes)(o), "simulated-nodes",
		"run simulated nodes (kwok-like): register this many Nodes (node-0, node-1, ...) and simulate them and every Node annotated kwok.x-k8s.io/node=fake: "+
			"status and Lease heartbeats, pods scheduled onto them (kube-scheduler's node filters), run and Ready at once, "+
			"Succeeded after the pod annotation pod-complete.stage.kwok.x-k8s.io/delay (1s for a Job's pods), deleted after their grace period; "+
			"0 simulates only annotated Nodes; unset: off")
}

// simulatedNodes is the flag's value: setting it, even to 0, turns the
// simulator on.
type simulatedNodes server.SimulatedNodesOptions

func (s *simulatedNodes) String() string {
	if !s.Enabled {
		return ""
	}
	return strconv.Itoa(s.Nodes)
}

func (s *simulatedNodes) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("must be a non-negative number of nodes, got %q", v)
	}
	s.Enabled, s.Nodes = true, n
	return nil
}

func (*simulatedNodes) Type() string { return "int" }
