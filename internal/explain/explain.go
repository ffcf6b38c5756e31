// Package explain answers "what would admission do with this request?"
// against a live admitd: it sends the object as a server-side dry run,
// asking for a verbose admission trace, fetches that trace by the
// request's audit ID from /admission/traces and prints it as a tree or as
// JSON. It is the logic of `admitd explain` and `kubectl admission
// explain`; it is not an offline evaluator (no server, no trace).
package explain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/pkg/admission/trace"
)

// Options are the inputs of one explanation.
type Options struct {
	// File is the object file (YAML or JSON, one object); "-" is stdin.
	File string
	// As is the user to impersonate (kubectl's --as); AsGroups its groups.
	As       string
	AsGroups []string
	// Namespace overrides the object's and the kubeconfig's namespace.
	Namespace string
	// Operation is CREATE (default), UPDATE or DELETE.
	Operation string
	// Output is "tree" (default) or "json".
	Output string
	// Kubeconfig and Context select the server as kubectl does (empty:
	// KUBECONFIG, then ~/.kube/config; the current context).
	Kubeconfig, Context string
	// Stdin is read for File "-".
	Stdin io.Reader
}

// ErrDenied is returned (after the trace is printed) when admission would
// deny the request.
var ErrDenied = errors.New("admission would deny this request (see the trace)")

// ErrNotAdmitd is returned when the server keeps no admission traces.
var ErrNotAdmitd = errors.New("admitd explain needs an admitd API server, which keeps admission traces at " + trace.Path)

// Run explains one request and writes the trace to out.
func Run(ctx context.Context, o Options, out io.Writer) error {
	op, err := operation(o.Operation)
	if err != nil {
		return err
	}
	if o.Output == "" {
		o.Output = "tree"
	}
	if o.Output != "tree" && o.Output != "json" {
		return fmt.Errorf("--output must be tree or json, got %q", o.Output)
	}
	obj, err := readObject(o)
	if err != nil {
		return err
	}
	cfg, defaultNS, err := loadConfig(o)
	if err != nil {
		return err
	}
	if err := checkAdmitd(ctx, cfg); err != nil {
		return err
	}
	target, err := resolve(cfg, obj, o.Namespace, defaultNS)
	if err != nil {
		return err
	}
	auditID := uuid.NewString()
	reqErr := dryRun(ctx, requestConfig(cfg, o, auditID), target, op)
	var status apierrors.APIStatus
	if reqErr != nil && !errors.As(reqErr, &status) {
		return fmt.Errorf("sending the dry run: %w", reqErr)
	}
	t, err := fetchTrace(ctx, cfg, auditID)
	if err != nil {
		if reqErr != nil {
			return fmt.Errorf("%w (the dry run answered: %v)", err, reqErr)
		}
		return err
	}
	if err := print(out, t, o.Output); err != nil {
		return err
	}
	if t.Decision == trace.Denied {
		return ErrDenied
	}
	if reqErr != nil {
		return fmt.Errorf("the dry run failed after admission: %w", reqErr)
	}
	return nil
}

func operation(op string) (string, error) {
	switch strings.ToUpper(op) {
	case "", "CREATE":
		return "CREATE", nil
	case "UPDATE":
		return "UPDATE", nil
	case "DELETE":
		return "DELETE", nil
	}
	return "", fmt.Errorf("--operation must be CREATE, UPDATE or DELETE, got %q", op)
}

func readObject(o Options) (*unstructured.Unstructured, error) {
	if o.File == "" {
		return nil, errors.New("an object file is required (-f FILE, or -f - for stdin)")
	}
	var data []byte
	var err error
	if o.File == "-" {
		if o.Stdin == nil {
			o.Stdin = os.Stdin
		}
		data, err = io.ReadAll(o.Stdin)
	} else {
		data, err = os.ReadFile(o.File)
	}
	if err != nil {
		return nil, err
	}
	if docs := strings.Split("\n"+string(data), "\n---"); len(nonEmpty(docs)) > 1 {
		return nil, fmt.Errorf("%s holds %d objects; explain takes one", o.File, len(nonEmpty(docs)))
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("reading %s: %w", o.File, err)
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return nil, fmt.Errorf("%s: the object needs apiVersion and kind", o.File)
	}
	if u.GetName() == "" && u.GetGenerateName() == "" {
		return nil, fmt.Errorf("%s: the object needs metadata.name", o.File)
	}
	return u, nil
}

func nonEmpty(docs []string) []string {
	var out []string
	for _, d := range docs {
		if strings.TrimSpace(strings.TrimPrefix(d, "-")) != "" {
			out = append(out, d)
		}
	}
	return out
}

// requestConfig is cfg impersonating o.As (when set), sending the audit ID
// and asking for a verbose trace.
func requestConfig(cfg *rest.Config, o Options, auditID string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.WarningHandler = rest.NoWarnings{} // the trace lists them
	if o.As != "" {
		c.Impersonate = rest.ImpersonationConfig{UserName: o.As, Groups: o.AsGroups}
	}
	c.Wrap(func(rt httpRoundTripper) httpRoundTripper {
		return headerRoundTripper{next: rt, headers: map[string]string{"Audit-ID": auditID, traceHeader: "verbose"}}
	})
	return c
}

// traceHeader is apiserver.TraceHeader (the server's package is not
// imported by clients).
const traceHeader = "X-Admitd-Trace"

func print(out io.Writer, t *trace.Trace, output string) error {
	if output == "json" {
		b, err := json.MarshalIndent(t, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	}
	return trace.Render(out, t)
}
