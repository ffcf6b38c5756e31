// Package cli wires admitd's subcommands (serve, version, ...) with cobra.
// It is a thin shell: flags are parsed here, the work is done by the
// packages the commands call.
package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/startup"
)

// NewRootCommand returns the admitd command with its subcommands.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "admitd",
		Short:         "Kubernetes admission control: an API server, a library and tools",
		SilenceUsage:  true,
		SilenceErrors: false,
		// the collector, paused while the binary starts (cmd/admitd
		// imports startup/pausegc), runs again once a command runs;
		// serve and version have their own hook
		PersistentPreRun: func(*cobra.Command, []string) { startup.Resume() },
	}
	root.AddCommand(newServeCommand(), newVersionCommand(), newWebhookCommand())
	root.AddCommand(newCertsCommand())
	root.AddCommand(newLintCommand())
	root.AddCommand(newEvalCommand(), newTestCommand(), newAuditCommand(), newReplayCommand())
	root.AddCommand(NewExplainCommand("admitd"))
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		// printing a line needs no collector: the process ends first
		PersistentPreRun: func(*cobra.Command, []string) {},
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "admitd %s\n", apiserver.GitVersion)
			return err
		},
	}
}
