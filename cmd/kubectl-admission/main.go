// Command kubectl-admission is admitd's kubectl plugin: on PATH, it makes
// `kubectl admission explain -f pod.yaml` show what admission does with a
// request (see admitd explain).
package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/admitd/admitd/internal/cli"
)

func main() {
	root := &cobra.Command{
		Use:          "kubectl admission",
		Short:        "Admission control tools for admitd servers",
		SilenceUsage: true,
	}
	root.AddCommand(cli.NewExplainCommand("kubectl admission"))
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
