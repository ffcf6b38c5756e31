// Command admitd is the admitd binary: an API server with Kubernetes
// admission control at its heart, and its companion tools.
package main

import (
	"os"

	"github.com/admitd/admitd/internal/cli"
	// the collector paused while the binary starts (see internal/startup)
	_ "github.com/admitd/admitd/internal/startup/pausegc"
)

func main() {
	if err := cli.NewRootCommand().Execute(); err != nil {
		os.Exit(cli.ExitCode(err))
	}
}
