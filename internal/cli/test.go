package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/admitd/admitd/internal/evaluate/suite"
)

// testOptions are `admitd test`'s flags.
type testOptions struct {
	junit string
	run   string
}

// newTestCommand is `admitd test`: internal/evaluate/suite.
func newTestCommand() *cobra.Command {
	var o testOptions
	cmd := &cobra.Command{
		Use:   "test DIR_OR_FILE...",
		Short: "Run admission test suites: requests and the outcomes expected of them, offline",
		Long: `Runs every case of the test suites (eval.admitd.io/v1alpha1 TestSuite files; a directory is searched
for them) through the whole admission chain, as admitd eval does: each case on its own in-process
admitd with the suite's configuration files, one request, and its expectations checked: allowed or
denied, the decision, the status code, the message (a part of it, or all of it), fields of the final
object (JSONPath, or a partial object), warnings and audit annotations. See docs/eval.md.

Prints PASS or FAIL per case and a summary; --junit writes JUnit XML for CI. Exit status: 0 when
every case passes, 1 when one fails, 2 when the suites cannot be read.`,
		Example: `  admitd test examples/eval
  admitd test policies/tests/ --junit report.xml
  admitd test suite.yaml --run 'team-a/.*denied'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTest(cmd, args, o)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	f := cmd.Flags()
	f.StringVar(&o.junit, "junit", "", "write the results as JUnit XML to this file")
	f.StringVar(&o.run, "run", "", "run only the cases whose suite/case name matches this regular expression")
	return cmd
}

func runTest(cmd *cobra.Command, args []string, o testOptions) error {
	quietKlog()
	var opts suite.Options
	if o.run != "" {
		re, err := regexp.Compile(o.run)
		if err != nil {
			return usageError(fmt.Errorf("--run: %w", err))
		}
		opts.Run = re
	}
	suites, err := suite.Load(args...)
	if err != nil {
		return usageError(err)
	}
	out := cmd.OutOrStdout()
	opts.OnCase = func(r suite.CaseResult) { _ = suite.WriteCase(out, r) }
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results := suite.Run(ctx, suites, opts)
	fmt.Fprintln(out, suite.Summary(results))
	if o.junit != "" {
		if err := writeJUnitFile(o.junit, results); err != nil {
			return err
		}
	}
	for _, r := range results {
		if !r.Passed() {
			cmd.SilenceUsage = true
			return &ExitError{Code: 1, Err: errors.New("some cases failed")}
		}
	}
	return nil
}

func writeJUnitFile(path string, results []suite.CaseResult) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := suite.WriteJUnit(f, results); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
