// Package apiserverflags keeps internal/cli/testdata/kube-apiserver-flags.txt,
// the flags kube-apiserver 1.37.2's command has, which admitd's flags
// reference (docs/flags.md) marks in `admitd serve`'s table. Regenerate with
//
//	cd test/upstream && go test ./apiserverflags -update
package apiserverflags

import (
	"flag"
	"testing"

	"k8s.io/kubernetes/cmd/kube-apiserver/app"

	"github.com/admitd/admitd/test/upstream/internal/flaglist"
)

var update = flag.Bool("update", false, "rewrite "+listFile+" from kube-apiserver's command")

const listFile = "../../../internal/cli/testdata/kube-apiserver-flags.txt"

// TestKubeAPIServerFlags: the list holds every flag of kube-apiserver's own
// cobra command (its option sets and the global version and logging flags),
// with type and default.
func TestKubeAPIServerFlags(t *testing.T) {
	cmd := app.NewAPIServerCommand()
	if cmd.Flags().Lookup("secure-port") == nil || cmd.Flags().Lookup("etcd-servers") == nil {
		t.Fatal("kube-apiserver's command has no --secure-port or --etcd-servers: not the command expected")
	}
	flaglist.Check(t, cmd, "kube-apiserver v1.37.2 (k8s.io/kubernetes/cmd/kube-apiserver/app.NewAPIServerCommand)",
		listFile, *update, "cd test/upstream && go test ./apiserverflags -update")
}
