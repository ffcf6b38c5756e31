package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Formats are the output formats of Write.
var Formats = []string{"text", "json", "policyreport", "junit", "sarif"}

// Write writes r in format.
func Write(w io.Writer, r *Report, format string) error {
	switch format {
	case "text":
		return writeText(w, r)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "policyreport":
		return writePolicyReports(w, r)
	case "junit":
		return writeJUnit(w, r)
	case "sarif":
		return writeSARIF(w, r)
	}
	return fmt.Errorf("unknown output format %q", format)
}

// writeText writes through a buffer: the report is not held twice.
func writeText(w io.Writer, r *Report) error {
	b := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(b, "audited %d objects as %ss; %d webhooks, policies (per binding) and plugins matched them\n", r.Objects, r.Operation, len(r.Policies))
	for _, p := range r.Policies {
		fmt.Fprintf(b, "\n%s: matched %d, denied %d, warned %d, annotated %d, mutated %d, errors %d\n",
			p.title(), p.Matched, len(p.Denied), len(p.Warned), len(p.Annotated), len(p.Mutated), len(p.Errors))
		for _, f := range p.Denied {
			fmt.Fprintf(b, "  denied     %s: %s\n", f.Object, f.Message)
		}
		for _, f := range p.Errors {
			fmt.Fprintf(b, "  error      %s: %s\n", f.Object, f.Message)
		}
		for _, f := range p.Warned {
			fmt.Fprintf(b, "  warned     %s: %s\n", f.Object, f.text())
		}
		for _, f := range p.Annotated {
			fmt.Fprintf(b, "  annotated  %s: %s\n", f.Object, annotations(f.AuditAnnotations))
		}
		for _, f := range p.Mutated {
			fmt.Fprintf(b, "  mutated    %s: %s\n", f.Object, compactJSON(f.Patch))
		}
	}
	writeSection(b, "not evaluated", r.NotEvaluated)
	if len(r.Skipped) > 0 {
		b.WriteString("\nskipped:\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(b, "  %s\n", s)
		}
	}
	if len(r.SetupWarnings) > 0 {
		b.WriteString("\nwarnings while the configuration was created:\n")
		for _, s := range r.SetupWarnings {
			fmt.Fprintf(b, "  %s\n", s)
		}
	}
	return b.Flush()
}

func writeSection(b io.Writer, title string, fs []Finding) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s (%d):\n", title, len(fs))
	for _, f := range fs {
		fmt.Fprintf(b, "  %s: %s\n", f.Object, f.Message)
	}
}

// title is "ValidatingAdmissionPolicy p (binding b)" and the like.
func (p *Policy) title() string {
	switch {
	case p.Name == "":
		return p.Plugin
	case strings.HasSuffix(p.Plugin, "Policy"):
		return fmt.Sprintf("%s %s (binding %s)", p.Plugin, p.Name, p.Configuration)
	}
	return fmt.Sprintf("%s %s (configuration %s)", p.Plugin, p.Name, p.Configuration)
}

// text is a warning finding's warnings, else its message.
func (f Finding) text() string {
	if len(f.Warnings) > 0 {
		return strings.Join(f.Warnings, "; ")
	}
	return f.Message
}

func annotations(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ", ")
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
