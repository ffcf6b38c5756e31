package cli

import (
	"errors"
	"flag"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/admitd/admitd/internal/evaluate"
)

// newEvalCommand is `admitd eval`: internal/evaluate on files.
func newEvalCommand() *cobra.Command {
	var o evaluate.Options
	var output string
	cmd := &cobra.Command{
		Use:   "eval -f FILE_OR_DIR... --request OBJECT_FILE [--operation CREATE|UPDATE|DELETE|CONNECT] [--old OBJECT_FILE] [--as USER [--impersonator USER]]",
		Short: "Run a request through the whole admission chain offline, with the configuration of files",
		Long: `Runs one request through the admission chain of an admitd started inside this process (memory
storage, nothing kept): the compiled-in plugins, MutatingAdmissionPolicies, mutating webhooks,
ValidatingAdmissionPolicies and validating webhooks, in kube-apiserver's order, with the same code
as admitd serve. The objects of -f (webhook configurations, policies, bindings, params, namespaces,
LimitRanges, ServiceAccounts, CRDs and anything else) are created first, by an administrator; then
the request is sent as its user (--as, impersonated by the administrator, or by --impersonator,
who must be allowed to).

The request is an object file (--operation, default CREATE; --old for the stored object of an
UPDATE or DELETE; for a CONNECT, the options object, such as a PodExecOptions, with --name of the
pod, node or service), or an admission.k8s.io AdmissionReview whose request gives them all. URL
webhooks are called for real; --webhook-responses answers webhooks from recorded responses
instead (see docs/eval.md); a webhook behind a Service needs one.

Prints the decision, the changes to the object, warnings, audit annotations and the admission
trace. Exit status: 0 allowed, 1 refused (denied by admission, or refused by the server after it),
2 for errors in the command line, the files or the setup.`,
		Example: `  admitd eval -f policies/ -f namespaces.yaml --request pod.yaml --as alice -n team-a
  admitd eval -f webhooks.yaml --request deploy.yaml --operation UPDATE --old deploy-old.yaml \
      --webhook-responses responses.yaml -o json
  admitd eval -f config/ --request review.json     # an AdmissionReview
  admitd eval -f hooks.yaml --request exec.yaml --operation CONNECT --name web -n team-a   # a PodExecOptions
  admitd eval -f rbac.yaml --request cm.yaml --as frank --impersonator dave --authorization-mode RBAC`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEval(cmd, o, output)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	f := cmd.Flags()
	f.StringArrayVarP(&o.Files, "filename", "f", nil, "file or directory of YAML or JSON objects that exist before the request (repeatable; - is standard input)")
	f.StringVar(&o.Request, "request", "", "the request: an object file, or an AdmissionReview")
	f.StringVar(&o.Operation, "operation", "", "CREATE (default), UPDATE, DELETE or CONNECT; default for an AdmissionReview: its own")
	f.StringVar(&o.Old, "old", "", "the stored object an UPDATE replaces or a DELETE deletes (default: the object of that name among -f)")
	f.StringVar(&o.User.Name, "as", "", "the user who sends the request (default: an administrator in system:masters)")
	f.StringSliceVar(&o.User.Groups, "as-group", nil, "a group of --as (repeatable)")
	f.StringVar(&o.User.UID, "as-uid", "", "the UID of --as")
	f.StringVar(&o.Impersonator.Name, "impersonator", "", "the user who sends the request, impersonating --as (default: the administrator); authenticated by a token eval makes")
	f.StringSliceVar(&o.Impersonator.Groups, "impersonator-group", nil, "a group of --impersonator (repeatable)")
	f.StringVar(&o.Impersonator.UID, "impersonator-uid", "", "the UID of --impersonator")
	f.StringVar(&o.Name, "name", "", "the object's name; for a CONNECT, the pod's, node's or service's")
	f.StringVar(&o.Subresource, "subresource", "", "the subresource (status, scale, ...; for a CONNECT, default: the options kind's: exec, attach, portforward, proxy)")
	f.StringVarP(&o.Namespace, "namespace", "n", "", "the request's namespace (default: the object's, else default)")
	f.BoolVar(&o.DryRun, "dry-run", false, "send the request as a dry run (the trace then lists every webhook and policy, each skipped one with its reason)")
	f.StringVar(&o.WebhookResponses, "webhook-responses", "", "recorded webhook responses (eval.admitd.io/v1alpha1 WebhookResponses) that answer the named webhooks instead of calling them")
	f.StringVarP(&output, "output", "o", "tree", "output format: tree, json or yaml")
	addEvalServerFlags(f, &o.Server)
	return cmd
}

// addEvalServerFlags are the in-process server's flags, shared with test.
func addEvalServerFlags(f *pflag.FlagSet, c *evaluate.ServerConfig) {
	f.StringSliceVar(&c.EnableAdmissionPlugins, "enable-admission-plugins", nil, "as admitd serve: admission plugins to enable in addition to the default ones")
	f.StringSliceVar(&c.DisableAdmissionPlugins, "disable-admission-plugins", nil, "as admitd serve: admission plugins to disable")
	f.StringVar(&c.AdmissionControlConfigFile, "admission-control-config-file", "", "as admitd serve: AdmissionConfiguration with per-plugin configuration")
	f.StringVar(&c.FeatureGates, "feature-gates", "", "as admitd serve: A=true,B=false,...")
	f.BoolVar(&c.AllowPrivileged, "allow-privileged", false, "as admitd serve: allow privileged containers")
	f.StringSliceVar(&c.AuthorizationModes, "authorization-mode", []string{"AlwaysAllow"}, "authorizers of the in-process server; Node,RBAC (serve's default) checks the user against the RBAC objects given")
	f.BoolVar(&c.QuotaController, "quota-controller", true, "as admitd serve: run the resource quota controller")
	f.StringSliceVar(&c.Controllers, "controllers", nil, "as admitd serve: kube-controller-manager's controllers to run ('*', 'foo', '-foo'; default: all but root-ca-certificate-publisher-controller and the workload controllers)")
	f.BoolVar(&c.ExpandWorkloads, "expand-workloads", false, "run the workload controllers and report what they create because of the request, through admission as on a cluster: a Deployment's ReplicaSet, its Pods (refused ones included, each with its trace)")
	f.StringVar(&c.ServiceMap, "service-map", "", "as admitd serve: JSON file mapping <svc>.<ns>.svc to the host:port that serves it")
	f.BoolVar(&c.CallUnreachableWebhooks, "call-unreachable-webhooks", false, "call webhooks behind Services neither --service-map nor --webhook-responses covers: the calls fail as on a cluster where the Service does not answer, and failurePolicy decides (default: refuse such a configuration)")
}

func runEval(cmd *cobra.Command, o evaluate.Options, output string) error {
	if !validFormat(output) {
		return usageError(errors.New("--output must be one of " + strings.Join(evaluate.Formats, ", ")))
	}
	quietKlog()
	in, err := evaluate.Load(o)
	if err != nil {
		return usageError(err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := evaluate.Run(ctx, in)
	if err != nil {
		var ce *evaluate.ConfigError
		if errors.As(err, &ce) {
			return usageError(err)
		}
		return err
	}
	if err := evaluate.Write(cmd.OutOrStdout(), r, output); err != nil {
		return err
	}
	if !r.Allowed {
		cmd.SilenceUsage = true
		return &ExitError{Code: 1, Err: errors.New("the request was refused: " + r.Decision)}
	}
	return nil
}

// quietKlog silences what client-go and the in-process server's
// libraries log through klog (the server's own logs are discarded too).
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

func validFormat(f string) bool {
	for _, v := range evaluate.Formats {
		if v == f {
			return true
		}
	}
	return false
}
