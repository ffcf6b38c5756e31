package cli

import "github.com/spf13/cobra"

func newTestCommand() *cobra.Command { return &cobra.Command{Use: "test"} }
