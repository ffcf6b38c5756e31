package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Formats are the output formats of Write.
var Formats = []string{"text", "json", "junit", "sarif"}

// Write writes r in format.
func Write(w io.Writer, r *Report, format string) error {
	switch format {
	case "text":
		return writeText(w, r)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "junit":
		return writeJUnit(w, r)
	case "sarif":
		return writeSARIF(w, r)
	}
	return fmt.Errorf("unknown output format %q", format)
}

func writeText(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "replayed %d of %d create, update, patch and delete requests; compared with the %s decisions: %d the same, %d different\n",
		r.Replayed, r.Requests, r.ComparedWith, r.Same, r.Differences())
	if r.FollowedOnly > 0 {
		fmt.Fprintf(&b, "%d requests before --since-time followed, not replayed\n", r.FollowedOnly)
	}
	section(&b, "now denied", r.NowDenied, func(d Difference) string {
		return fmt.Sprintf("%d %s%s", d.After.Code, d.After.Message, by(d))
	})
	section(&b, "now allowed", r.NowAllowed, func(d Difference) string {
		return fmt.Sprintf("was %d %s", d.Before.Code, d.Before.Message)
	})
	section(&b, "different object", r.Changed, func(d Difference) string {
		return compactJSON(d.Patch) + by(d)
	})
	section(&b, "different audit annotations", r.Annotations, func(d Difference) string {
		return fmt.Sprintf("%s -> %s", annotationText(d.AnnotationsBefore), annotationText(d.AnnotationsAfter))
	})
	if len(r.NotReplayed) > 0 {
		fmt.Fprintf(&b, "\nnot replayed (%d):\n", len(r.NotReplayed))
		for _, n := range r.NotReplayed {
			fmt.Fprintf(&b, "  %s [%s]: %s\n", n.Request, n.Request.AuditID, n.Reason)
		}
	}
	if len(r.Skipped) > 0 {
		b.WriteString("\nskipped:\n")
		for _, k := range r.skippedReasons() {
			fmt.Fprintf(&b, "  %d %s\n", r.Skipped[k], k)
		}
	}
	if len(r.SetupWarnings) > 0 {
		b.WriteString("\nwarnings:\n")
		for _, s := range r.SetupWarnings {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func section(b *strings.Builder, title string, ds []Difference, detail func(Difference) string) {
	if len(ds) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s (%d):\n", title, len(ds))
	for _, d := range ds {
		fmt.Fprintf(b, "  %s [%s, %s]: %s\n", d.Request, d.Request.AuditID, d.Request.Time, detail(d))
		if d.Note != "" {
			fmt.Fprintf(b, "    (%s)\n", d.Note)
		}
	}
}

func by(d Difference) string {
	if len(d.By) == 0 {
		return ""
	}
	return " (by " + strings.Join(d.By, ", ") + ")"
}

func annotationText(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
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
