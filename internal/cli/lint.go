package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/admitd/admitd/internal/openapi"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/lint"
)

// lintOptions are `admitd lint`'s flags.
type lintOptions struct {
	files      []string
	probe      bool
	output     string
	failOn     string
	kubeconfig string
	context    string
}

// newLintCommand is `admitd lint`: pkg/lint on files or on the server of
// the current kubeconfig.
func newLintCommand() *cobra.Command {
	var o lintOptions
	cmd := &cobra.Command{
		Use:   "lint [-f FILE_OR_DIR]...",
		Short: "Check webhook configurations and admission policies for risky settings",
		Long: `Check webhook configurations, ValidatingAdmissionPolicies, MutatingAdmissionPolicies, their
bindings and params for settings that put a cluster at risk: webhooks that can deadlock the control
plane (kube-system, their own namespace, leases, nodes, their own endpoints), failurePolicy Fail on
every resource, timeouts that add up beyond the request deadline, side effects, v1beta1-only review
versions, certificates that do not verify or expire soon (--probe), policies and bindings that do not
fit together, and CEL expressions near their cost limit.

With -f, objects are read from YAML or JSON files and directories ("-" is standard input); without it,
from the server of the current kubeconfig, as kubectl finds it (--kubeconfig, $KUBECONFIG,
~/.kube/config). The exit status is 1 when a finding is at or above --fail-on.`,
		Example: `  # lint manifests before applying them, as a CI step
  admitd lint -f deploy/webhooks/ -f policies.yaml

  # lint the live cluster's configuration and check the URL webhooks' certificates
  admitd lint --probe

  # SARIF for code scanning, failing on warnings too
  admitd lint -f deploy/ --output sarif --fail-on warning > lint.sarif`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLint(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&o.files, "filename", "f", nil, "File or directory of YAML or JSON objects to lint (repeatable; - is standard input). Default: the server of the kubeconfig")
	f.BoolVar(&o.probe, "probe", false, "Connect to URL webhooks to check their certificate against the caBundle and its expiry")
	f.StringVarP(&o.output, "output", "o", "text", "Output format: text, json or sarif")
	f.StringVar(&o.failOn, "fail-on", "error", "Exit with status 1 when a finding has this severity or a higher one: info, warning, error or none")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to the kubeconfig file (without -f)")
	f.StringVar(&o.context, "context", "", "The kubeconfig context to use (without -f)")
	return cmd
}

func runLint(cmd *cobra.Command, o lintOptions) error {
	write, ok := map[string]func(io.Writer, []lint.Finding) error{
		"text": lint.WriteText, "json": lint.WriteJSON, "sarif": lint.WriteSARIF,
	}[o.output]
	if !ok {
		return fmt.Errorf("--output must be text, json or sarif, not %q", o.output)
	}
	threshold, ok := lint.ParseSeverity(o.failOn)
	if !ok && o.failOn != "none" {
		return fmt.Errorf("--fail-on must be info, warning, error or none, not %q", o.failOn)
	}
	set, err := lintInput(cmd, o)
	if err != nil {
		return err
	}
	cat := registry.NewCatalogue()
	schemas := openapi.PolicySchemas{Service: openapi.New(cat, openapi.Options{}), Catalogue: cat}
	findings := lint.Run(cmd.Context(), set, lint.Options{Probe: o.probe, Schemas: schemas})
	if err := write(cmd.OutOrStdout(), findings); err != nil {
		return err
	}
	if worst, any := lint.Worst(findings); any && o.failOn != "none" && worst >= threshold {
		cmd.SilenceUsage = true
		return fmt.Errorf("lint found problems at or above %s severity", threshold)
	}
	return nil
}

// lintInput reads the files of -f, or the server of the kubeconfig.
func lintInput(cmd *cobra.Command, o lintOptions) (*lint.Set, error) {
	if len(o.files) > 0 {
		return lint.Load(o.files...)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: o.context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("no -f and no usable kubeconfig: %w", err)
	}
	return lint.FromServer(cmd.Context(), cfg)
}
