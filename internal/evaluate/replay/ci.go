package replay

import (
	"io"

	"github.com/admitd/admitd/internal/evaluate/audit"
	"github.com/admitd/admitd/internal/evaluate/cireport"
)

// unattributed names the differences no webhook or policy of the replay
// accounts for: a request allowed now that was refused then, an object
// different without a mutation.
const unattributed = "recorded decision"

// finding is one difference as the CI formats see it.
type finding struct {
	d     Difference
	kind  string // now-denied, now-allowed, changed, annotations
	level string
}

func (r *Report) findings() []finding {
	var out []finding
	for _, d := range r.NowDenied {
		out = append(out, finding{d, "now-denied", cireport.LevelError})
	}
	for _, d := range r.NowAllowed {
		out = append(out, finding{d, "now-allowed", cireport.LevelWarning})
	}
	for _, d := range r.Changed {
		out = append(out, finding{d, "changed", cireport.LevelWarning})
	}
	for _, d := range r.Annotations {
		out = append(out, finding{d, "annotations", cireport.LevelNote})
	}
	return out
}

// rulesOf are the webhooks and policies a finding is by (the recorded
// decision when none).
func rulesOf(f finding) []string {
	if len(f.d.By) == 0 {
		return []string{unattributed}
	}
	return f.d.By
}

func (f finding) message() string {
	d := f.d
	switch f.kind {
	case "now-denied":
		return "would now be denied: " + d.After.Message
	case "now-allowed":
		return "would now be allowed; was refused: " + d.Before.Message
	case "changed":
		return "would store a different object: " + compactJSON(d.Patch)
	}
	return "different audit annotations: " + annotationText(d.AnnotationsBefore) + " -> " + annotationText(d.AnnotationsAfter)
}

func caseName(d Difference) string { return d.Request.String() + " [" + d.Request.AuditID + "]" }

// writeJUnit writes a testsuite per webhook or policy of the replay that
// made a difference, with a testcase per request: failed when it would
// now be denied; the other differences are the case's system-out.
func writeJUnit(w io.Writer, r *Report) error {
	var order []string
	suites := map[string]*cireport.Suite{}
	for _, f := range r.findings() {
		for _, rule := range rulesOf(f) {
			s, ok := suites[rule]
			if !ok {
				s = &cireport.Suite{Name: rule}
				suites[rule] = s
				order = append(order, rule)
			}
			c := cireport.Case{Name: caseName(f.d)}
			if f.kind == "now-denied" {
				c.Failure = &cireport.Failure{Type: f.kind, Message: f.d.After.Message}
			} else {
				c.SystemOut = f.message()
			}
			s.Cases = append(s.Cases, c)
		}
	}
	out := make([]cireport.Suite, 0, len(order)+1)
	for _, k := range order {
		out = append(out, *suites[k])
	}
	if len(r.NotReplayed) > 0 {
		s := cireport.Suite{Name: "not replayed"}
		for _, n := range r.NotReplayed {
			s.Cases = append(s.Cases, cireport.Case{Name: n.Request.String() + " [" + n.Request.AuditID + "]",
				Failure: &cireport.Failure{Type: "error", Message: n.Reason}})
		}
		out = append(out, s)
	}
	return cireport.WriteJUnit(w, "admitd replay", out)
}

// writeSARIF writes a rule per webhook or policy that made a difference,
// and a result per request and rule: error when it would now be denied,
// warning when now allowed or given a different object, note for
// different audit annotations.
func writeSARIF(w io.Writer, r *Report) error {
	var rules []cireport.Rule
	seen := map[string]bool{}
	var results []cireport.Result
	for _, f := range r.findings() {
		for _, rule := range rulesOf(f) {
			if !seen[rule] {
				seen[rule] = true
				rules = append(rules, cireport.Rule{ID: rule, Name: rule, Description: rule})
			}
			props := map[string]any{"auditID": f.d.Request.AuditID, "difference": f.kind}
			if f.d.Patch != nil {
				props["patch"] = f.d.Patch
			}
			results = append(results, cireport.Result{RuleID: rule, Level: f.level, Message: f.d.Request.String() + ": " + f.message(),
				Object: f.d.Request.String(), File: f.d.Request.File, Line: f.d.Request.Line, Properties: props})
		}
	}
	return cireport.WriteSARIF(w, audit.Tool, rules, results)
}
