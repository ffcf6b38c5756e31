package cli

import (
	"github.com/spf13/cobra"

	"github.com/admitd/admitd/internal/explain"
)

// NewExplainCommand returns `explain`, shared by admitd and the kubectl
// plugin kubectl-admission.
func NewExplainCommand(parent string) *cobra.Command {
	var o explain.Options
	cmd := &cobra.Command{
		Use:   "explain -f OBJECT_FILE [--as USER] [-n NAMESPACE] [--operation CREATE|UPDATE|DELETE]",
		Short: "Show what admission does with a request: a server-side dry run and its trace",
		Long: `Sends the object to the server of the current kubeconfig as a server-side dry run and
prints its admission trace: every plugin, webhook and policy in chain order, matched or
skipped with the reason, patches, warnings and the decision. The server must be admitd
(it keeps the traces); reading them needs get on the non-resource URLs /admission/traces
and /admission/traces/* (system:masters may). Exit status 1 when admission denies.`,
		Example: "  " + parent + " explain -f pod.yaml\n  " + parent + " explain -f pod.yaml --as alice -n team-a -o json\n  " +
			parent + " explain -f deploy.yaml --operation UPDATE",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Stdin = cmd.InOrStdin()
			return explain.Run(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.File, "filename", "f", "", "the object (YAML or JSON; - for stdin)")
	f.StringVar(&o.As, "as", "", "user to impersonate for the dry run")
	f.StringSliceVar(&o.AsGroups, "as-group", nil, "group to impersonate (repeatable)")
	f.StringVarP(&o.Namespace, "namespace", "n", "", "namespace (default: the object's, then the kubeconfig context's)")
	f.StringVar(&o.Operation, "operation", "CREATE", "CREATE, UPDATE (of the stored object) or DELETE")
	f.StringVarP(&o.Output, "output", "o", "tree", "tree or json (admission.admitd.io/v1alpha1 Trace)")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: KUBECONFIG, then ~/.kube/config)")
	f.StringVar(&o.Context, "context", "", "kubeconfig context (default: the current one)")
	return cmd
}
