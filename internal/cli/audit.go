package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/admitd/admitd/internal/evaluate"
	"github.com/admitd/admitd/internal/evaluate/audit"
)

// auditOptions are `admitd audit`'s flags.
type auditOptions struct {
	config           []string
	objects          []string
	kubeconfig       string
	context          string
	chunkSize        int64
	asCreate         bool
	webhookResponses string
	output           string
	failOn           string
	server           evaluate.ServerConfig
}

// newAuditCommand is `admitd audit`: internal/evaluate/audit on files or
// on the objects of a live cluster.
func newAuditCommand() *cobra.Command {
	var o auditOptions
	cmd := &cobra.Command{
		Use:   "audit -f CONFIG_FILE_OR_DIR... (--objects FILE_OR_DIR... | --kubeconfig FILE)",
		Short: "What a candidate admission configuration would do to the objects already there",
		Long: `Evaluates existing objects through a candidate admission configuration (webhook configurations,
ValidatingAdmissionPolicies, MutatingAdmissionPolicies and their bindings, with their params: the
files of -f) in an admitd started inside this process, as admitd eval does: each object as the
UPDATE that re-applies it unchanged (old and new object the same), or, with --as-create, as its
CREATE. URL webhooks are called for real; --webhook-responses answers them from recorded responses.

The objects come from files (--objects: kubectl get -A -o yaml dumps, List documents, multi-document
YAML, directories) or from the cluster of a kubeconfig (--kubeconfig, --context: every listable
resource, in pages of 500 (--chunk-size), read-only; nothing is written to the cluster). The evaluation is seeded
with the namespaces (and their labels) and CRDs of the objects. Admission configurations and
APIServices among the objects are not audited.

The report lists, per webhook and per policy and binding, the objects it would deny (with the
message), warn about, audit-annotate or mutate (with the JSON patch), and its errors; -o json gives
the same as an audit.admitd.io/v1alpha1 AuditReport, -o policyreport as wg-policy PolicyReports and
a ClusterPolicyReport (wgpolicyk8s.io/v1alpha2) in YAML. Exit status: 1 when anything is at or above
--fail-on (deny, the default; warn; mutate; annotate; none), 2 for errors in the command line, the
files or the setup.`,
		Example: `  # would this policy deny any of the objects of a dump?
  kubectl get deploy,pods,svc -A -o yaml > objects.yaml
  admitd audit -f require-team.yaml --objects objects.yaml

  # the live cluster, read-only, as PolicyReports, with a webhook answered from recorded responses
  admitd audit -f candidate/ --kubeconfig ~/.kube/config --webhook-responses responses.yaml -o policyreport`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAudit(cmd, o)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	f := cmd.Flags()
	f.StringArrayVarP(&o.config, "filename", "f", nil, "file or directory of the candidate configuration and what it needs (repeatable; - is standard input)")
	f.StringArrayVar(&o.objects, "objects", nil, "file or directory of the objects to audit (repeatable; - is standard input)")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "audit the objects of this kubeconfig's cluster (read-only)")
	f.StringVar(&o.context, "context", "", "the kubeconfig context to use (with --kubeconfig)")
	f.Int64Var(&o.chunkSize, "chunk-size", audit.DefaultPageSize, "as kubectl get's: the objects of each list request (with --kubeconfig)")
	f.BoolVar(&o.asCreate, "as-create", false, "evaluate each object as its CREATE instead of the UPDATE that re-applies it")
	f.StringVar(&o.webhookResponses, "webhook-responses", "", "recorded webhook responses (eval.admitd.io/v1alpha1 WebhookResponses) that answer the named webhooks instead of calling them")
	f.StringVarP(&o.output, "output", "o", "text", "output format: "+strings.Join(audit.Formats, ", "))
	f.StringVar(&o.failOn, "fail-on", audit.SeverityDeny, "exit with status 1 when anything is at or above: deny, warn, mutate, annotate or none")
	addEvalServerFlags(f, &o.server)
	quotaControllerOff(f, &o.server)
	return cmd
}

// quotaControllerOff makes --quota-controller default to false for audit:
// the ResourceQuotas among the objects are seeded with the usage they
// record, which the in-process controller would recount from the few
// objects loaded at a time.
func quotaControllerOff(f *pflag.FlagSet, c *evaluate.ServerConfig) {
	c.QuotaController = false
	flag := f.Lookup("quota-controller")
	flag.DefValue = "false"
	flag.Usage = "run the resource quota controller in the in-process server (off: the ResourceQuotas among the objects keep the usage they record, as the cluster counts it)"
}

func runAudit(cmd *cobra.Command, o auditOptions) error {
	if !validAuditFormat(o.output) {
		return usageError(errors.New("--output must be one of " + strings.Join(audit.Formats, ", ")))
	}
	if !audit.ValidSeverity(o.failOn) {
		return usageError(fmt.Errorf("--fail-on must be deny, warn, mutate, annotate or none, not %q", o.failOn))
	}
	quietKlog()
	opts, src, err := auditInput(o)
	if err != nil {
		return usageError(err)
	}
	if files, ok := src.(*audit.Files); ok {
		defer files.Close()
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := audit.Run(ctx, src, opts)
	if err != nil {
		var ce *evaluate.ConfigError
		if errors.As(err, &ce) {
			return usageError(err)
		}
		return err
	}
	if err := audit.Write(cmd.OutOrStdout(), r, o.output); err != nil {
		return err
	}
	if r.Fails(o.failOn) {
		cmd.SilenceUsage = true
		return &ExitError{Code: 1, Err: fmt.Errorf("the configuration would act on existing objects at or above --fail-on=%s", o.failOn)}
	}
	return nil
}

// auditInput reads the configuration and names the objects' source.
func auditInput(o auditOptions) (audit.Options, audit.Source, error) {
	opts := audit.Options{AsCreate: o.asCreate, Server: o.server}
	if len(o.config) == 0 {
		return opts, nil, errors.New("a candidate configuration is required (-f FILE_OR_DIR)")
	}
	var err error
	if opts.Config, err = evaluate.LoadObjects(o.config...); err != nil {
		return opts, nil, err
	}
	if o.webhookResponses != "" {
		if opts.Responses, err = evaluate.LoadResponses(o.webhookResponses); err != nil {
			return opts, nil, err
		}
	}
	switch {
	case len(o.objects) > 0 && o.kubeconfig != "":
		return opts, nil, errors.New("--objects and --kubeconfig exclude each other")
	case len(o.objects) > 0:
		src, err := audit.LoadFiles(o.objects...)
		return opts, src, err
	case o.kubeconfig != "":
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: o.kubeconfig}
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
			&clientcmd.ConfigOverrides{CurrentContext: o.context}).ClientConfig()
		if err != nil {
			return opts, nil, fmt.Errorf("--kubeconfig: %w", err)
		}
		cfg.QPS, cfg.Burst = 50, 100
		if o.chunkSize <= 0 {
			return opts, nil, errors.New("--chunk-size must be positive")
		}
		return opts, &audit.Cluster{Config: cfg, Host: cfg.Host, PageSize: o.chunkSize}, nil
	}
	return opts, nil, errors.New("the objects to audit are required: --objects FILE_OR_DIR or --kubeconfig FILE")
}

func validAuditFormat(f string) bool {
	for _, v := range audit.Formats {
		if v == f {
			return true
		}
	}
	return false
}
