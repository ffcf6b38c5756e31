package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/admitd/admitd/internal/evaluate"
	"github.com/admitd/admitd/internal/evaluate/replay"
)

// replayOptions are `admitd replay`'s flags.
type replayOptions struct {
	auditLogs        []string
	candidate        []string
	baseline         []string
	objects          []string
	webhookResponses string
	output           string
	failOn           string
	sinceTime        string
	server           evaluate.ServerConfig
}

// newReplayCommand is `admitd replay`: internal/evaluate/replay on audit
// log files.
func newReplayCommand() *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay --audit-log FILE... -f CANDIDATE_FILE_OR_DIR... [--baseline CONFIG_FILE_OR_DIR...]",
		Short: "What a candidate admission configuration would have decided on recorded requests",
		Long: `Replays the create, update, patch and delete requests of an audit log (audit.k8s.io/v1 Events,
JSON lines, as kube-apiserver's and admitd serve's --audit-log-path write them, at level
RequestResponse for the objects: Request is enough to replay, not to compare objects) through a
candidate admission configuration (webhook configurations, ValidatingAdmissionPolicies,
MutatingAdmissionPolicies and their bindings, with their params: the files of -f) in an admitd
started inside this process, as admitd eval and admitd audit do, and compares what it decides with
what the cluster decided then (or, with --baseline, with what the baseline configuration decides).

Each request is sent as a dry run, as its recorded user, after the object it acts on was put in as
the cluster had stored it: the responseObject of the log's last request on it, or the object of
--objects (kubectl get -A -o yaml dumps of the cluster before the log begins; their namespaces and
labels are what namespaceSelectors see). Nothing is sent to a cluster. The patch type of a PATCH is
not in the log: a JSON array is a JSON patch, an object a server-side apply when the request forced
or named its apiVersion, kind and name with a field manager not kubectl-*, else a strategic merge
patch (a merge patch for custom resources). Requests on subresources and admission configurations,
and requests refused before admission or for a stale resourceVersion, are skipped and counted, as
is a file's incomplete last line (a log still being written); any other line that is not an Event
is an error naming its file and line. The log is read twice, one event at a time.

The report lists the requests that would now be denied (with the message and the webhooks or
policies that deny), now be allowed, store a different object (the JSON patch from the recorded
object to the replayed one) or get different admission audit annotations; -o json gives the same
as a replay.admitd.io/v1alpha1 ReplayReport, -o junit as JUnit XML (a testsuite per webhook or
policy, a testcase per request, failed when it would now be denied), -o sarif as SARIF 2.1.0.
Exit status: 1 when a request would now be denied (--fail-on deny, the default) or differs in any
way (--fail-on change), never with --fail-on none; 2 for errors in the command line, the files or
the setup, and when nothing could be replayed (a log below level Request, or of other requests),
unless --fail-on none.`,
		Example: `  # would the new policy have denied any of last hour's requests?
  admitd replay --audit-log /var/log/kube-apiserver/audit.log -f current/ -f require-team.yaml

  # compare two configurations on the log, as JUnit for CI
  admitd replay --audit-log audit.log --objects cluster-dump.yaml -f candidate/ --baseline current/ -o junit`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runReplay(cmd, o)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	f := cmd.Flags()
	f.StringArrayVar(&o.auditLogs, "audit-log", nil, "audit log file of JSON-lines audit.k8s.io/v1 Events (repeatable, read in order)")
	f.StringArrayVarP(&o.candidate, "filename", "f", nil, "file or directory of the candidate configuration and what it needs (repeatable; - is standard input)")
	f.StringArrayVar(&o.baseline, "baseline", nil, "file or directory of a configuration to compare with instead of the recorded decisions (repeatable)")
	f.StringArrayVar(&o.objects, "objects", nil, "file or directory of the objects there before the log begins (repeatable)")
	f.StringVar(&o.sinceTime, "since-time", "", "replay only the requests received at or after this RFC 3339 time; earlier ones are followed (their recorded results are the state later requests find), not compared")
	f.StringVar(&o.webhookResponses, "webhook-responses", "", "recorded webhook responses (eval.admitd.io/v1alpha1 WebhookResponses) that answer the named webhooks instead of calling them")
	f.StringVarP(&o.output, "output", "o", "text", "output format: "+strings.Join(replay.Formats, ", "))
	f.StringVar(&o.failOn, "fail-on", replay.FailOnDeny, "exit with status 1 when a request would now be denied (deny), differs in any way (change), or never (none)")
	addEvalServerFlags(f, &o.server)
	return cmd
}

func runReplay(cmd *cobra.Command, o replayOptions) error {
	if !slices.Contains(replay.Formats, o.output) {
		return usageError(errors.New("--output must be one of " + strings.Join(replay.Formats, ", ")))
	}
	if !replay.ValidFailOn(o.failOn) {
		return usageError(fmt.Errorf("--fail-on must be deny, change or none, not %q", o.failOn))
	}
	quietKlog()
	log, opts, err := replayInput(o)
	if err != nil {
		return usageError(err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := replay.Run(ctx, log, opts)
	if err != nil {
		var ce *evaluate.ConfigError
		if errors.As(err, &ce) {
			return usageError(err)
		}
		return err
	}
	if err := replay.Write(cmd.OutOrStdout(), r, o.output); err != nil {
		return err
	}
	if r.Fails(o.failOn) {
		cmd.SilenceUsage = true
		return &ExitError{Code: 1, Err: fmt.Errorf("the replay differs from the %s decisions at --fail-on=%s", r.ComparedWith, o.failOn)}
	}
	if why := r.NothingReplayed(); why != "" && o.failOn != replay.FailOnNone {
		cmd.SilenceUsage = true
		return &ExitError{Code: 2, Err: fmt.Errorf("%s; --fail-on=%s cannot pass on nothing (--fail-on none accepts it)", why, o.failOn)}
	}
	return nil
}

// replayInput scans the log and reads the configurations and the objects.
func replayInput(o replayOptions) (*replay.Log, replay.Options, error) {
	var opts replay.Options
	if len(o.auditLogs) == 0 {
		return nil, opts, errors.New("an audit log is required (--audit-log FILE)")
	}
	if len(o.candidate) == 0 {
		return nil, opts, errors.New("a candidate configuration is required (-f FILE_OR_DIR)")
	}
	log, err := replay.ScanLog(o.auditLogs...)
	if err != nil {
		return nil, opts, err
	}
	if opts.Candidate, err = evaluate.LoadObjects(o.candidate...); err != nil {
		return nil, opts, err
	}
	if len(o.baseline) > 0 {
		if opts.Baseline, err = evaluate.LoadObjects(o.baseline...); err != nil {
			return nil, opts, err
		}
		if opts.Baseline == nil {
			opts.Baseline = []evaluate.Object{}
		}
	}
	if len(o.objects) > 0 {
		if opts.Objects, err = evaluate.LoadObjects(o.objects...); err != nil {
			return nil, opts, err
		}
	}
	if o.webhookResponses != "" {
		if opts.Responses, err = evaluate.LoadResponses(o.webhookResponses); err != nil {
			return nil, opts, err
		}
	}
	if o.sinceTime != "" {
		if opts.Since, err = time.Parse(time.RFC3339Nano, o.sinceTime); err != nil {
			return nil, opts, fmt.Errorf("--since-time: %w", err)
		}
	}
	opts.Server = o.server
	return log, opts, nil
}
