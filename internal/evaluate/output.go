package evaluate

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/pkg/admission/trace"
)

// Formats Write knows.
var Formats = []string{"tree", "json", "yaml"}

// Write prints r as format: "tree" (the decision, the changes admission
// and the server made to the object, warnings, audit annotations and the
// trace as a tree), "json" or "yaml" (the whole Result).
func Write(w io.Writer, r *Result, format string) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "tree", "":
		return writeTree(w, r)
	}
	return &ConfigError{Err: fmt.Errorf("the output format must be one of %s, not %q", strings.Join(Formats, ", "), format)}
}

func writeTree(w io.Writer, r *Result) error {
	if err := writeRequestTree(w, r); err != nil {
		return err
	}
	return writeControllerRequests(w, r.CreatedByControllers)
}

// writeControllerRequests lists what the workload controllers created
// because of the request, each with its first request's trace.
func writeControllerRequests(w io.Writer, rs []ControllerRequest) error {
	for _, cr := range rs {
		times := ""
		if cr.Count > 1 {
			times = fmt.Sprintf(" (%d times)", cr.Count)
		}
		line := fmt.Sprintf("\n%s created %s in %s%s: %s", cr.Client, cr.Resource, cr.Namespace, times, cr.Decision)
		if cr.Message != "" {
			line += ": " + cr.Message
		}
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			return err
		}
		if err := trace.Render(w, cr.Trace); err != nil {
			return err
		}
	}
	return nil
}

func writeRequestTree(w io.Writer, r *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "decision: %s\n", decisionText(r))
	if r.Status != nil && r.Status.Message != "" {
		fmt.Fprintf(&b, "message: %s\n", r.Status.Message)
	}
	if c := r.Connection; c != nil {
		fmt.Fprintf(&b, "connection: admitted, not opened by eval; the server then answered %d %s: %s\n", c.Code, http.StatusText(int(c.Code)), c.Message)
	}
	if r.Object != nil && r.sent != nil {
		changes := ObjectDiff(r.sent.Object, r.Object)
		fmt.Fprintf(&b, "object: %d changes by admission and the server (server-set metadata left out)\n", len(changes))
		for _, c := range changes {
			if r.sensitive() {
				c = redactChange(c)
			}
			fmt.Fprintf(&b, "  %s\n", c)
		}
	}
	writeList(&b, "setup warnings (creating the objects given)", r.SetupWarnings)
	if r.Trace != nil && slices.Equal(r.Warnings, r.Trace.Warnings) {
		b.WriteString("trace:\n")
		_, err := io.WriteString(w, b.String())
		if err != nil {
			return err
		}
		return trace.Render(w, r.Trace)
	}
	writeList(&b, "warnings", r.Warnings)
	if len(r.AuditAnnotations) > 0 {
		b.WriteString("audit annotations:\n")
		for _, k := range sortedKeys(r.AuditAnnotations) {
			fmt.Fprintf(&b, "  %s: %s\n", k, r.AuditAnnotations[k])
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if r.Trace == nil {
		_, err := io.WriteString(w, "trace: none (the request did not reach admission)\n")
		return err
	}
	if _, err := io.WriteString(w, "trace:\n"); err != nil {
		return err
	}
	return trace.Render(w, r.Trace)
}

func decisionText(r *Result) string {
	if r.Status == nil {
		return r.Decision
	}
	return fmt.Sprintf("%s (%d %s)", r.Decision, r.Status.Code, http.StatusText(int(r.Status.Code)))
}

func writeList(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n", title)
	for _, it := range items {
		fmt.Fprintf(b, "  - %s\n", it)
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sensitive reports whether the object's values are not shown in the tree
// (Secrets, TokenRequests, TokenReviews: see trace.Sensitive).
func (r *Result) sensitive() bool {
	if r.Trace == nil {
		return r.sent.GetKind() == "Secret" && r.sent.GroupVersionKind().Group == ""
	}
	q := r.Trace.Request
	return trace.Sensitive(q.APIGroup, q.Resource, q.Subresource)
}

// redactChange keeps a change's field and drops its values.
func redactChange(c string) string {
	if i := strings.Index(c, ": "); i >= 0 {
		return c[:i] + ": " + trace.Redacted
	}
	return c
}
