// Package controllermanagerflags keeps
// internal/cli/testdata/kube-controller-manager-flags.txt, the flags
// kube-controller-manager 1.37.2's command has, which admitd's flags reference
// (docs/flags.md) marks in `admitd serve`'s table: admitd runs some of its
// controllers and takes their flags. Regenerate with
//
//	cd test/upstream && go test ./controllermanagerflags -update
package controllermanagerflags

import (
	"flag"
	"testing"

	"k8s.io/kubernetes/cmd/kube-controller-manager/app"

	"github.com/admitd/admitd/test/upstream/internal/flaglist"
)

var update = flag.Bool("update", false, "rewrite "+listFile+" from kube-controller-manager's command")

const listFile = "../../../internal/cli/testdata/kube-controller-manager-flags.txt"

// TestKubeControllerManagerFlags: the list holds every flag of
// kube-controller-manager's own cobra command, with type and default.
func TestKubeControllerManagerFlags(t *testing.T) {
	cmd := app.NewControllerManagerCommand()
	if cmd.Flags().Lookup("controllers") == nil || cmd.Flags().Lookup("terminated-pod-gc-threshold") == nil {
		t.Fatal("kube-controller-manager's command has no --controllers or --terminated-pod-gc-threshold: not the command expected")
	}
	flaglist.Check(t, cmd, "kube-controller-manager v1.37.2 (k8s.io/kubernetes/cmd/kube-controller-manager/app.NewControllerManagerCommand)",
		listFile, *update, "cd test/upstream && go test ./controllermanagerflags -update")
}
