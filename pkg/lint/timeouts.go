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
	seen := map[string]bool{}
	var out []Finding
	for _, c := range candidateCalls(hooks) {
		var matched []*hook
		for i := range hooks {
			if hookCovers(&hooks[i], c) {
				matched = append(matched, &hooks[i])
			}
		}
		matched = compatible(matched)
		worst := worstCase(matched)
		if worst < deadline || len(matched) == 0 {
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
		if n.add(h.namespaceSel) && o.add(h.objectSel) {
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

// candidateCalls is every combination of the operations, groups,
// resources and subresources the rules name, plus a name none of them
// names; the request most webhooks can match is among them.
func candidateCalls(hooks []hook) []call {
	groups, resources, subs := []string{anyValue}, []string{anyValue}, []string{"", anyValue}
	for i := range hooks {
		for _, r := range hooks[i].rules {
			groups = appendNew(groups, r.APIGroups...)
			for _, p := range r.Resources {
				res, sub, _ := strings.Cut(p, "/")
				resources = appendNew(resources, res)
				subs = appendNew(subs, sub)
			}
		}
	}
	ops := []string{string(v1.Create), string(v1.Update), string(v1.Delete), string(v1.Connect)}
	var out []call
	for _, op := range ops {
		for _, g := range groups {
			for _, r := range resources {
				for _, s := range subs {
					out = append(out, call{op, g, r, s})
				}
			}
		}
	}
	return out
}

func appendNew(list []string, values ...string) []string {
	for _, v := range values {
		if v != "*" && !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// hookCovers reports whether a rule of h matches c, wildcards included.
func hookCovers(h *hook, c call) bool {
	for _, r := range h.rules {
		if listHas(opsOf(r.Operations), c.op) && listHas(r.APIGroups, c.group) && resourcesCover(r.Resources, c.resource, c.sub) {
			return true
		}
	}
	return false
}

func opsOf(ops []v1.OperationType) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = string(o)
	}
	return out
}

func listHas(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

// resourcesCover applies the resource patterns of a rule as upstream
// does: "r" is resource r without subresource, "*" any resource, and after
// a slash "*" any subresource (or none) and "s" subresource s.
func resourcesCover(patterns []string, res, sub string) bool {
	for _, p := range patterns {
		pr, ps, _ := strings.Cut(p, "/")
		if (pr == "*" || pr == res) && (ps == "*" || ps == sub) {
			return true
		}
	}
	return false
}
