package audit

import (
	"io"
	"strings"

	"github.com/admitd/admitd/internal/evaluate/cireport"
)

// Tool is how the SARIF output names admitd.
var Tool = cireport.Tool{Name: "admitd", InformationURI: "https://github.com/admitd/admitd"}

// writeJUnit writes a testsuite per webhook, policy and binding, and
// plugin, with a testcase per object it ran on: failed when it denied
// the object or failed closed on it; warnings, audit annotations,
// patches and errors it failed open on are the case's system-out.
func writeJUnit(w io.Writer, r *Report) error {
	suites := make([]cireport.Suite, 0, len(r.Policies))
	for _, p := range r.Policies {
		suites = append(suites, cireport.Suite{Name: p.title(), Cases: p.cases()})
	}
	if len(r.NotEvaluated) > 0 {
		s := cireport.Suite{Name: "not evaluated"}
		for _, f := range r.NotEvaluated {
			s.Cases = append(s.Cases, cireport.Case{Name: f.Object.String(),
				Failure: &cireport.Failure{Type: "error", Message: f.Message}})
		}
		suites = append(suites, s)
	}
	return cireport.WriteJUnit(w, "admitd audit", suites)
}

// cases are the policy's findings and passes, one case per object.
func (p *Policy) cases() []cireport.Case {
	var order []string
	byObject := map[string]*cireport.Case{}
	caseOf := func(ref ObjectRef) *cireport.Case {
		k := ref.String()
		c, ok := byObject[k]
		if !ok {
			c = &cireport.Case{Name: k}
			byObject[k] = c
			order = append(order, k)
		}
		return c
	}
	for _, f := range p.Denied {
		caseOf(f.Object).Failure = &cireport.Failure{Type: "deny", Message: f.Message}
	}
	for _, f := range p.Errors {
		c := caseOf(f.Object)
		if failedOpen(f) {
			c.SystemOut += "error: " + f.Message + "\n"
		} else {
			c.Failure = &cireport.Failure{Type: "error", Message: f.Message}
		}
	}
	for _, f := range p.Warned {
		caseOf(f.Object).SystemOut += "warning: " + f.text() + "\n"
	}
	for _, f := range p.Annotated {
		caseOf(f.Object).SystemOut += "audit annotations: " + annotations(f.AuditAnnotations) + "\n"
	}
	for _, f := range p.Mutated {
		caseOf(f.Object).SystemOut += "mutated: " + compactJSON(f.Patch) + "\n"
	}
	for _, ref := range p.Passed {
		caseOf(*ref)
	}
	out := make([]cireport.Case, len(order))
	for i, k := range order {
		out[i] = *byObject[k]
	}
	return out
}

// failedOpen reports whether an error finding was admitted by failurePolicy
// Ignore.
func failedOpen(f Finding) bool { return strings.HasPrefix(f.Message, "failed open") }

// writeSARIF writes a rule per webhook, policy and binding, and plugin,
// and a result per finding: error for a denial or a closed failure,
// warning for a warning or an open failure, note for a mutation or an
// audit annotation.
func writeSARIF(w io.Writer, r *Report) error {
	var rules []cireport.Rule
	var results []cireport.Result
	for _, p := range r.Policies {
		id := p.title()
		rules = append(rules, cireport.Rule{ID: id, Name: p.Plugin, Description: id})
		add := func(f Finding, level, msg string, props map[string]any) {
			results = append(results, cireport.Result{RuleID: id, Level: level, Message: f.Object.String() + ": " + msg,
				Object: f.Object.String(), File: f.Object.Source, Properties: props})
		}
		for _, f := range p.Denied {
			add(f, cireport.LevelError, "denied: "+f.Message, nil)
		}
		for _, f := range p.Errors {
			level := cireport.LevelError
			if failedOpen(f) {
				level = cireport.LevelWarning
			}
			add(f, level, f.Message, nil)
		}
		for _, f := range p.Warned {
			add(f, cireport.LevelWarning, "warning: "+f.text(), nil)
		}
		for _, f := range p.Mutated {
			add(f, cireport.LevelNote, "mutated", map[string]any{"patch": f.Patch})
		}
		for _, f := range p.Annotated {
			add(f, cireport.LevelNote, "audit annotations: "+annotations(f.AuditAnnotations), nil)
		}
	}
	return cireport.WriteSARIF(w, Tool, rules, results)
}
