package lint

import (
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/admissionregistration/v1"
)

// anyValue stands for a name no rule lists: only wildcards match it.
const anyValue = "\x00any"

// call is a request shape: operation, group, resource and subresource.
// Versions are ignored (matchPolicy Equivalent, and the worst case for
// Exact); selectors are compared with each other by compatible.
type call struct{ op, group, resource, sub string }

// lintTimeouts reports sets of webhooks that can all match one request and
// whose worst-case time reaches the deadline: mutating webhooks run in
// sequence (those with reinvocationPolicy IfNeeded possibly twice),
// validating webhooks in parallel.
func lintTimeouts(hooks []hook, deadline time.Duration) []Finding {
	all := make([]*hook, len(hooks))
	for i := range hooks {
		all[i] = &hooks[i]
	}
	if worstCase(all) < deadline {
		return nil // not even every webhook at once
	}
	cov := newCoverage(hooks)
	seen := map[string]bool{}
	var out []Finding
	for _, c := range candidateCalls(hooks) {
		matched := cov.hooks(c, all)
		if worstCase(matched) < deadline {
			continue // even if every selector agreed
		}
		matched = compatible(matched)
		worst := worstCase(matched)
		if worst < deadline {
			continue
		}
		key := hookSetKey(matched)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, timeoutFinding(matched, c, worst, deadline))
	}
	return out
}

// compatible keeps, slowest first, the hooks whose namespace and object
// selectors some request can satisfy together with those already kept
// (e.g. team=a and team=b exclude each other).
func compatible(hooks []*hook) []*hook {
	sorted := slices.Clone(hooks)
	slices.SortStableFunc(sorted, func(a, b *hook) int { return int(weight(b) - weight(a)) })
	ns, obj := labelLimits{}, labelLimits{}
	var out []*hook
	for _, h := range sorted {
		n, o := ns.clone(), obj.clone()
		if h.selectors.valid && n.add(h.selectors.namespace) && o.add(h.selectors.object) {
			ns, obj = n, o
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, func(a, b *hook) int { return slices.Index(hooks, a) - slices.Index(hooks, b) })
	return out
}

// weight is how long a hook can hold a request, in seconds.
func weight(h *hook) int32 {
	if h.mutating && h.reinvoked {
		return 2 * h.timeout
	}
	return h.timeout
}

func worstCase(hooks []*hook) time.Duration {
	var sequential, parallel time.Duration
	for _, h := range hooks {
		t := time.Duration(h.timeout) * time.Second
		switch {
		case h.mutating && h.reinvoked:
			sequential += 2 * t
		case h.mutating:
			sequential += t
		default:
			parallel = max(parallel, t)
		}
	}
	return sequential + parallel
}

func timeoutFinding(hooks []*hook, c call, worst, deadline time.Duration) Finding {
	parts := make([]string, len(hooks))
	sev := Warning
	for i, h := range hooks {
		kind := "validating"
		if h.mutating {
			kind = "mutating"
			if h.reinvoked {
				kind += ", reinvoked"
			}
		}
		parts[i] = fmt.Sprintf("%s/%s (%ds, %s)", h.config.Name, h.name, h.timeout, kind)
		if h.failsClosed() && worst > deadline {
			sev = Error
		}
	}
	first := hooks[0]
	return first.finding(TimeoutsOverDeadline, sev, first.field("timeoutSeconds"),
		fmt.Sprintf("a %s request can be sent to %d webhooks whose worst case is %s, at least the %s request deadline: %s",
			c, len(hooks), worst, deadline, strings.Join(parts, ", ")))
}

func (c call) String() string {
	show := func(s, dflt string) string {
		if s == anyValue {
			return dflt
		}
		return s
	}
	res := show(c.resource, "<any resource>")
	if c.sub != "" {
		res += "/" + show(c.sub, "<any subresource>")
	}
	if c.group != "" {
		res += "." + show(c.group, "<any group>")
	}
	return c.op + " " + res
}

func hookSetKey(hooks []*hook) string {
	keys := make([]string, len(hooks))
	for i, h := range hooks {
		keys[i] = fmt.Sprintf("%s/%s/%d", h.config.Kind, h.config.Name, h.index)
	}
	return strings.Join(keys, "|")
}

// candidateCalls are the requests to try: each rule's own shapes
// (wildcards standing for a name no rule lists), and where a shape has a
// wildcard, its meets with the other shapes (a "*/status" rule and a
// "pods/*" rule meet on pods/status). Meets are skipped when there would
// be more than maxMeets of them.
func candidateCalls(hooks []hook) []call {
	seen := map[call]bool{}
	var natural, wild []call
	add := func(c call) {
		if !seen[c] {
			seen[c] = true
			natural = append(natural, c)
			if c.group == anyValue || c.resource == anyValue || c.sub == anyValue {
				wild = append(wild, c)
			}
		}
	}
	for i := range hooks {
		for _, r := range hooks[i].rules {
			for _, op := range expandOps(r.Operations) {
				for _, g := range r.APIGroups {
					for _, p := range r.Resources {
						res, sub, hasSub := strings.Cut(p, "/")
						if !hasSub {
							sub = ""
						}
						add(call{op, wildcard(g), wildcard(res), wildcard(sub)})
					}
				}
			}
		}
	}
	if len(wild)*len(natural) > maxMeets {
		return natural
	}
	out := natural
	for _, w := range wild {
		for _, n := range natural {
			if m, ok := meet(w, n); ok && !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// maxMeets bounds the work of candidateCalls on huge wildcard-heavy sets.
const maxMeets = 1 << 20

func wildcard(v string) string {
	if v == "*" {
		return anyValue
	}
	return v
}

func expandOps(ops []v1.OperationType) []string {
	var out []string
	for _, op := range ops {
		if op == v1.OperationAll {
			return []string{string(v1.Create), string(v1.Update), string(v1.Delete), string(v1.Connect)}
		}
		out = append(out, string(op))
	}
	return out
}

// meet is the most specific call both a and b stand for, if any.
func meet(a, b call) (call, bool) {
	one := func(x, y string) (string, bool) {
		switch {
		case x == anyValue:
			return y, true
		case y == anyValue || x == y:
			return x, true
		}
		return "", false
	}
	var m call
	var ok1, ok2, ok3 bool
	m.op = a.op
	m.group, ok1 = one(a.group, b.group)
	m.resource, ok2 = one(a.resource, b.resource)
	m.sub, ok3 = one(a.sub, b.sub)
	return m, a.op == b.op && ok1 && ok2 && ok3
}
