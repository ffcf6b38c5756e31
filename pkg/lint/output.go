package lint

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, ok := ParseSeverity(string(b))
	if !ok {
		return fmt.Errorf("unknown severity %q", b)
	}
	*s = v
	return nil
}

// Summary counts findings by severity.
type Summary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
}

// Summarize counts fs by severity.
func Summarize(fs []Finding) Summary {
	var s Summary
	for _, f := range fs {
		switch f.Severity {
		case Error:
			s.Errors++
		case Warning:
			s.Warnings++
		default:
			s.Infos++
		}
	}
	return s
}

func (s Summary) String() string {
	n := s.Errors + s.Warnings + s.Infos
	if n == 0 {
		return "no findings"
	}
	return fmt.Sprintf("%d %s: %d error(s), %d warning(s), %d info", n, plural(n, "finding"), s.Errors, s.Warnings, s.Infos)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// WriteText writes fs grouped by object, each finding with its field, why
// and fix, and a closing summary line.
func WriteText(w io.Writer, fs []Finding) error {
	var b strings.Builder
	var last Object
	for i, f := range fs {
		if i == 0 || f.Object != last {
			if i > 0 {
				b.WriteString("\n")
			}
			last = f.Object
			fmt.Fprintf(&b, "%s\n", objectTitle(f.Object))
		}
		fmt.Fprintf(&b, "  %-7s %s  %s\n", f.Severity, f.ID, f.Message)
		if f.Field != "" {
			fmt.Fprintf(&b, "          field: %s\n", f.Field)
		}
		fmt.Fprintf(&b, "          why:   %s\n          fix:   %s\n", f.Why, f.Fix)
	}
	if len(fs) > 0 {
		b.WriteString("\n")
	}
	b.WriteString(Summarize(fs).String() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func objectTitle(o Object) string {
	name := o.Name
	if o.Namespace != "" {
		name = o.Namespace + "/" + name
	}
	t := o.Kind + " " + name
	if o.Source != "" {
		t += " (" + o.Source + ")"
	}
	return t
}

// Report is the JSON form of a lint run.
type Report struct {
	Findings []Finding `json:"findings"`
	Summary  Summary   `json:"summary"`
}

// WriteJSON writes fs as an indented Report.
func WriteJSON(w io.Writer, fs []Finding) error {
	if fs == nil {
		fs = []Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Report{Findings: fs, Summary: Summarize(fs)})
}

// Warning is the one-line form of a finding that the API server returns
// as a Warning header when such an object is written.
func (f Finding) Warning() string {
	w := fmt.Sprintf("%s (%s): %s. Fix: %s", f.ID, f.Severity, f.Message, f.Fix)
	return strings.Join(strings.Fields(w), " ")
}
