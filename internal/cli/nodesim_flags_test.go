package cli

import (
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/server"
)

func TestSimulatedNodesFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    server.SimulatedNodesOptions
		wantErr bool
	}{
		{args: nil},
		{args: []string{"--simulated-nodes=3"}, want: server.SimulatedNodesOptions{Enabled: true, Nodes: 3}},
		{args: []string{"--simulated-nodes=0"}, want: server.SimulatedNodesOptions{Enabled: true}},
		{args: []string{"--simulated-nodes=-1"}, wantErr: true},
		{args: []string{"--simulated-nodes=many"}, wantErr: true},
	} {
		var o server.SimulatedNodesOptions
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		addSimulatedNodeFlags(fs, &o)
		err := fs.Parse(tc.args)
		if (err != nil) != tc.wantErr {
			t.Errorf("%v: error %v, want error %v", tc.args, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && o != tc.want {
			t.Errorf("%v: options %+v, want %+v", tc.args, o, tc.want)
		}
	}
}
