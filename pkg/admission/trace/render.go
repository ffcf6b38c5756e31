package trace

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Render writes t as a readable tree: the request and its decision, then
// each phase (and the reinvocation round) with its plugins in chain order,
// each webhook or policy under its plugin with its outcome, reason, patch
// and field diff; then warnings and audit annotations.
func Render(w io.Writer, t *Trace) error {
	p := &printer{w: w}
	p.header(t)
	for _, sec := range sections(t.Steps) {
		p.line("%s", sec.title)
		for i, g := range sec.groups {
			p.group(g, i == len(sec.groups)-1)
		}
	}
	if len(t.Steps) == 0 {
		p.line("(no admission step ran)")
	}
	if !t.Verbose {
		p.line("(webhooks and policies out of scope by rules are not listed; admitd explain lists them)")
	}
	if len(t.Warnings) > 0 {
		p.line("warnings:")
		for _, s := range t.Warnings {
			p.line("  - %s", s)
		}
	}
	if len(t.AuditAnnotations) > 0 {
		p.line("audit annotations:")
		for _, k := range slices.Sorted(maps.Keys(t.AuditAnnotations)) {
			p.line("  %s: %s", k, t.AuditAnnotations[k])
		}
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

func (p *printer) header(t *Trace) {
	q := t.Request
	res := q.Resource
	if q.Subresource != "" {
		res += "/" + q.Subresource
	}
	if q.APIGroup != "" {
		res += "." + q.APIGroup
	}
	obj := q.Name
	if q.Namespace != "" {
		obj = q.Namespace + "/" + q.Name
	}
	op := q.Operation
	if op == "" {
		op = strings.ToUpper(q.Verb)
	}
	dry := ""
	if q.DryRun {
		dry = " (dry run)"
	}
	p.line("%s %s %s%s by %s", op, res, obj, dry, userText(q))
	decision := fmt.Sprintf("%s (%d)", t.Decision, t.Code)
	if t.RejectedBy != "" {
		decision += " by " + t.RejectedBy
	}
	if t.Message != "" {
		decision += ": " + t.Message
	}
	p.line("decision: %s", decision)
	p.line("audit ID %s at %s, %s", q.AuditID, q.Time.UTC().Format("2006-01-02T15:04:05.000Z"), t.Duration)
}

func userText(q Request) string {
	text := q.User
	if q.Impersonator != "" {
		text += " (impersonated by " + q.Impersonator + ")"
	}
	if q.Client != "" {
		text += ", " + q.Client
	}
	return text
}

// section is a phase in one round; groups are its plugins in order.
type section struct {
	title  string
	groups []group
}

// group is one plugin's consecutive steps.
type group struct {
	plugin string
	steps  []Step
}

func sections(steps []Step) []section {
	var out []section
	for _, s := range steps {
		title := s.Phase
		if s.Round > 0 {
			title += " (reinvocation round " + fmt.Sprint(s.Round) + ")"
		}
		if len(out) == 0 || out[len(out)-1].title != title {
			out = append(out, section{title: title})
		}
		sec := &out[len(out)-1]
		if n := len(sec.groups); n == 0 || sec.groups[n-1].plugin != s.Plugin || s.Name == "" || sec.groups[n-1].steps[0].Name == "" {
			sec.groups = append(sec.groups, group{plugin: s.Plugin})
		}
		g := &sec.groups[len(sec.groups)-1]
		g.steps = append(g.steps, s)
	}
	return out
}

func (p *printer) group(g group, last bool) {
	branch, indent := "├─ ", "│  "
	if last {
		branch, indent = "└─ ", "   "
	}
	if len(g.steps) == 1 && g.steps[0].Name == "" {
		s := g.steps[0]
		p.line("%s%s: %s", branch, g.plugin, summary(s))
		p.details(s, indent+"   ")
		return
	}
	p.line("%s%s", branch, g.plugin)
	for i, s := range g.steps {
		b, in := "├─ ", "│  "
		if i == len(g.steps)-1 {
			b, in = "└─ ", "   "
		}
		name := s.Name
		if s.Configuration != "" {
			name += " (" + s.Configuration + ")"
		}
		p.line("%s%s%s: %s", indent, b, name, summary(s))
		p.details(s, indent+in+"   ")
	}
}

// summary is a step's one-line outcome: "mutated, 2.1ms, admission.k8s.io/v1,
// failurePolicy Fail" or "skipped (NamespaceSelector)".
func summary(s Step) string {
	parts := []string{s.Outcome}
	if s.SkipReason != "" {
		parts[0] += " (" + s.SkipReason + ")"
	}
	if s.Duration != "" {
		parts = append(parts, s.Duration)
	}
	if s.ReviewVersion != "" {
		parts = append(parts, s.ReviewVersion)
	}
	if s.FailurePolicy != "" && s.Matched {
		parts = append(parts, "failurePolicy "+s.FailurePolicy)
	}
	return strings.Join(parts, ", ")
}

func (p *printer) details(s Step, indent string) {
	if s.Reason != "" {
		p.line("%swhy: %s", indent, s.Reason)
	}
	if s.Error != "" {
		p.line("%serror: %s", indent, s.Error)
	}
	if len(s.Patch) > 0 {
		p.line("%spatch: %s", indent, s.Patch)
	}
	for _, c := range s.FieldDiff {
		p.line("%s%s", indent, changeText(c))
	}
	for _, w := range s.Warnings {
		p.line("%swarning: %s", indent, w)
	}
	for _, k := range slices.Sorted(maps.Keys(s.AuditAnnotations)) {
		p.line("%saudit annotation %s: %s", indent, k, s.AuditAnnotations[k])
	}
}

// changeText is "+ metadata.labels.a: "b"", "~ spec.x: 1 -> 2" or "- spec.y".
func changeText(c FieldChange) string {
	switch {
	case c.Op == "remove":
		if c.Old != nil {
			return fmt.Sprintf("- %s (was %s)", c.Field, c.Old)
		}
		return "- " + c.Field
	case c.Old != nil:
		return fmt.Sprintf("~ %s: %s -> %s", c.Field, c.Old, c.New)
	}
	return fmt.Sprintf("+ %s: %s", c.Field, c.New)
}
